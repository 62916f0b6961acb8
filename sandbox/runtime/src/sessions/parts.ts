import type { Claims } from './claims.js'
import type { LiveSessions } from './live.js'
import type { StoreOrder } from './order.js'
import type { Parking } from './parking.js'
import type { Saves } from './saves.js'
import type { SessionSpill } from './spill.js'

/** What a `SessionTable` is made of, for the steps of its operations (`take`, `detach`, `attach`, `end`). */
export interface TableParts<S> {
  readonly spill: SessionSpill<S> | undefined
  readonly live: LiveSessions<S>
  readonly order: StoreOrder
  readonly claims: Claims<S>
  readonly saves: Saves<S>
  readonly parking: Parking<S>
  /** Drops idle sessions past their TTL and saves those idle long enough (`SessionTable.sweep`). */
  readonly sweep: (now: number) => void
}
