import { Buffer } from 'node:buffer'

/** Ends each entry in the journal: a byte UTF-8 never contains. */
const END = 0xff
/** The journal's header: one word, the bytes committed so far. */
const HEADER_BYTES = 8

/**
 * A copy of a run's accepted log entries in memory the host shares with the engine worker, so the
 * entries a worker accepted but had not flushed yet (they go to the host in batches, after each pump)
 * survive the watchdog terminating it: the host reads them back from here. The worker appends each
 * entry the ledger accepted as its UTF-8 bytes and an end byte, then publishes the new length; the
 * ledger charges each entry its bytes plus one separator, so `maxOutputBytes` of room holds every
 * entry of a run (a journal with less room keeps a prefix). Entries are well-formed text (the guest
 * prelude replaces lone surrogates), so they come back unchanged.
 */
export class LogJournal {
  readonly #length: Int32Array
  readonly #bytes: Buffer
  #full = false

  constructor(memory: SharedArrayBuffer) {
    this.#length = new Int32Array(memory, 0, 1)
    this.#bytes = Buffer.from(memory, HEADER_BYTES)
  }

  /** Memory for a journal with room for `bytes` bytes of entries. */
  static memory(bytes: number): SharedArrayBuffer {
    return new SharedArrayBuffer(HEADER_BYTES + Math.max(0, Math.floor(bytes)))
  }

  /** Host side, before a run starts on the worker (which then is idle): empties the journal. */
  clear(): void {
    Atomics.store(this.#length, 0, 0)
  }

  /** Worker side: appends an entry; once one does not fit, the journal keeps the prefix it holds. */
  append(text: string): void {
    if (this.#full) return
    const at = Atomics.load(this.#length, 0)
    // UTF-8 never takes fewer bytes than UTF-16 units: a long entry is refused without measuring it.
    const room = this.#bytes.length - at - 1
    if (text.length > room || Buffer.byteLength(text, 'utf8') > room) {
      this.#full = true
      return
    }
    const written = this.#bytes.write(text, at, 'utf8')
    this.#bytes[at + written] = END
    Atomics.store(this.#length, 0, at + written + 1)
  }

  /** Worker side, when a run starts: appends again (the host cleared the memory). */
  reopen(): void {
    this.#full = false
  }

  /** Host side: the entries past the first `fromBytes` bytes (the entries the host already has). */
  read(fromBytes: number): string[] {
    const end = Atomics.load(this.#length, 0)
    const entries: string[] = []
    let start = fromBytes
    for (let i = start; i < end; i++) {
      if (this.#bytes[i] !== END) continue
      entries.push(this.#bytes.toString('utf8', start, i))
      start = i + 1
    }
    return entries
  }
}

/** The journal bytes a log entry takes (its UTF-8 bytes and the end byte). */
export function journalBytes(text: string): number {
  return Buffer.byteLength(text, 'utf8') + 1
}
