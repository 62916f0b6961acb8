import { describe, expect, test } from 'vitest'
import { HostCalls, MAX_RESULT_DEPTH, type HostCallsOptions, type ReplyFlush } from './host-calls.js'
import { DEFAULT_LIMITS } from './limits.js'
import type { CodeRunRequest, JsonValue } from './types.js'

function request(call: CodeRunRequest['call'], signal?: AbortSignal): CodeRunRequest {
  return { code: '', bindings: ['t'], call, ...(signal === undefined ? {} : { signal }) }
}

/** A `HostCalls` whose deliveries and stops are recorded. */
function hostCalls(
  call: CodeRunRequest['call'],
  flush: ReplyFlush,
  limits: Partial<HostCallsOptions['limits']> = {},
  signal?: AbortSignal,
) {
  const batches: [string, number][] = []
  const stops: string[] = []
  const calls = new HostCalls(request(call, signal), {
    limits: { ...DEFAULT_LIMITS, ...limits },
    flush,
    deliver: (batch, count) => batches.push([batch, count]),
    stop: (reason) => stops.push(reason),
  })
  return { calls, batches, stops }
}

/**
 * 10 ms, then one `setImmediate`: it runs after a flush the settled calls scheduled (immediates run in order),
 * however long their settling took. A bare timer could fire first on a loaded machine.
 */
const turn = (): Promise<void> => new Promise((resolve) => setTimeout(() => setImmediate(resolve), 10))

describe.each<ReplyFlush>(['microtask', 'immediate'])('HostCalls (%s flush)', (flush) => {
  test('calls that finish before the flush arrive as one batch, in the order they finished', async () => {
    const { calls, batches } = hostCalls(async (_name, args) => args, flush)
    calls.start(1, 't', '{"a":1}')
    calls.start(2, 't', '[2]')
    expect(calls.idle).toBe(false)
    await turn()
    expect(batches).toEqual([['[[1,1,{"a":1}],[2,1,[2]]]', 2]])
    expect(calls.started).toBe(2)
    expect(calls.idle).toBe(true)
  })

  test('a rejected or synchronously throwing call settles as a rejection entry with its message', async () => {
    const { calls, batches } = hostCalls((name) => {
      if (name === 'sync') throw new Error('thrown')
      return Promise.reject(new Error('rejected'))
    }, flush)
    calls.start(1, 'sync', '{}')
    calls.start(2, 'async', '{}')
    await turn()
    expect(batches.map(([batch]) => batch)).toEqual(['[[1,0,"thrown"],[2,0,"rejected"]]'])
  })

  test('close aborts the signal of calls in flight and drops their late results', async () => {
    let seen: AbortSignal | undefined
    let answer: (value: JsonValue) => void = () => undefined
    const { calls, batches } = hostCalls((_name, _args, signal) => {
      seen = signal
      return new Promise((resolve) => (answer = resolve))
    }, flush)
    calls.start(1, 't', '{}')
    calls.close()
    expect(seen?.aborted).toBe(true)
    answer('late')
    await turn()
    expect(batches).toEqual([])
    calls.start(2, 't', '{}')
    expect(calls.started).toBe(1)
  })

  test('the call past maxSubCalls stops the run and never reaches request.call', async () => {
    const names: string[] = []
    const { calls, batches, stops } = hostCalls(async (name) => (names.push(name), null), flush, { maxSubCalls: 2 })
    calls.start(1, 'a', '{}')
    calls.start(2, 'b', '{}')
    expect(stops).toEqual([])
    calls.start(3, 'c', '{}')
    expect(stops).toEqual(['limit-calls'])
    await turn()
    expect(names).toEqual(['a', 'b'])
    expect(calls.started).toBe(2)
    expect(batches).toEqual([['[[1,1,null],[2,1,null]]', 2]])
  })

  test('maxPendingSubCalls counts calls not yet delivered back: a delivered call frees its place', async () => {
    const answers: ((value: JsonValue) => void)[] = []
    const { calls, batches, stops } = hostCalls(() => new Promise((resolve) => answers.push(resolve)), flush, {
      maxPendingSubCalls: 2,
    })
    calls.start(1, 't', '{}')
    calls.start(2, 't', '{}')
    answers[0]?.(1)
    // Answered but not delivered yet: still pending.
    calls.start(3, 't', '{}')
    expect(stops).toEqual(['limit-pending'])
    await turn()
    expect(batches).toEqual([['[[1,1,1]]', 1]])
    calls.start(4, 't', '{}')
    expect(stops).toEqual(['limit-pending'])
    expect(calls.started).toBe(3)
    calls.start(5, 't', '{}')
    expect(stops).toEqual(['limit-pending', 'limit-pending'])
  })

  test('results that finish together are delivered in batches of at most a quarter of memoryBytes of text; a longer result goes alone', async () => {
    const answers: ((value: JsonValue) => void)[] = []
    const { calls, batches } = hostCalls(() => new Promise((resolve) => answers.push(resolve)), flush, {
      memoryBytes: 160,
    })
    for (let id = 1; id <= 6; id++) calls.start(id, 't', '{}')
    // Each entry is [id,1,"xxxxxxxxxx"]: 18 characters; two fit in a quarter of 160 with the brackets and a comma.
    for (const answer of answers.slice(0, 4)) answer('x'.repeat(10))
    answers[4]?.('y'.repeat(100))
    answers[5]?.('z'.repeat(200))
    await turn()
    expect(batches).toEqual([
      ['[[1,1,"xxxxxxxxxx"],[2,1,"xxxxxxxxxx"]]', 2],
      ['[[3,1,"xxxxxxxxxx"],[4,1,"xxxxxxxxxx"]]', 2],
      [`[[5,1,"${'y'.repeat(100)}"]]`, 1],
      [
        '[[6,0,"the tool result is at least 202 characters of JSON, more than this sandbox\'s memory (160 bytes) can hold"]]',
        1,
      ],
    ])
    expect(calls.idle).toBe(true)
  })

  test('the argument text of the calls the host holds is bounded by memoryBytes: a settled call gives its share back, a parked one keeps it', async () => {
    const answers: ((value: JsonValue) => void)[] = []
    const { calls, batches, stops } = hostCalls(() => new Promise((resolve) => answers.push(resolve)), flush, {
      memoryBytes: 100,
    })
    const args = (chars: number): string => JSON.stringify({ s: 'x'.repeat(chars - 8) })
    calls.start(1, 't', args(60))
    calls.start(2, 't', args(40))
    expect(stops).toEqual([])
    calls.start(3, 't', args(9))
    expect(stops).toEqual(['limit-args'])
    expect(calls.started).toBe(2)
    answers[0]?.(1)
    await turn()
    expect(batches).toEqual([['[[1,1,1]]', 1]])
    calls.start(4, 't', args(60))
    expect(stops).toEqual(['limit-args'])
    expect(calls.started).toBe(3)
  })

  test("once the run's signal aborted, nothing reaches the guest: the results the abort cut short and later calls stop the run as abort", async () => {
    const controller = new AbortController()
    const started: string[] = []
    // A tool that rejects when the run's signal aborts, as the PTC scheduler's calls do.
    const call: CodeRunRequest['call'] = (name) => {
      started.push(name)
      return new Promise((_resolve, reject) =>
        controller.signal.addEventListener('abort', () => reject(new Error('This operation was aborted'))),
      )
    }
    const { calls, batches, stops } = hostCalls(call, flush, {}, controller.signal)
    calls.start(1, 'slow', '{}')
    controller.abort()
    await turn()
    expect(batches).toEqual([])
    expect(stops).toEqual(['abort'])
    calls.start(2, 'after', '{}')
    expect(started).toEqual(['slow'])
    expect(stops).toEqual(['abort', 'abort'])
  })

  test(`a result nested deeper than MAX_RESULT_DEPTH (${MAX_RESULT_DEPTH}) rejects its call; one at the bound is delivered`, async () => {
    const nest = (depth: number): JsonValue => {
      let v: JsonValue = []
      for (let i = 1; i < depth; i++) v = [v]
      return v
    }
    const { calls, batches } = hostCalls(
      async (name) => nest(name === 'at' ? MAX_RESULT_DEPTH : MAX_RESULT_DEPTH + 1),
      flush,
    )
    calls.start(1, 'at', '{}')
    calls.start(2, 'past', '{}')
    await turn()
    const [batch] = batches[0] ?? []
    const entries = JSON.parse(batch ?? '[]') as JsonValue[][]
    expect(entries[0]?.slice(0, 2)).toEqual([1, 1])
    expect(entries[1]).toEqual([
      2,
      0,
      `the tool result nests more than ${MAX_RESULT_DEPTH} levels deep, more than this sandbox can receive`,
    ])
  })
})
