import { createIsolatedVmRuntime, isolatedVmAvailability } from '@ptc/sandbox-isolated-vm'
import { describe } from 'vitest'
import { HOST_LAG_BOUND_MS, hostileProgramSuite } from './hostile.suite.js'

const availability = isolatedVmAvailability()

describe.skipIf(!availability.available)(
  `isolated-vm${availability.available ? '' : ` (skipped: ${availability.reason})`}`,
  () => {
    // Guests run on isolated-vm's own threads; the host thread only moves strings, so lag stays small.
    hostileProgramSuite('isolated-vm', (extras) => createIsolatedVmRuntime({ warmIsolates: 2, ...extras }), {
      backend: 'isolated-vm',
      maxLagMs: HOST_LAG_BOUND_MS,
    })
  },
)
