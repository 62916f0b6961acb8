import { describe, expect, test } from 'vitest'
import { HostCalls, type ReplyFlush } from './host-calls.js'
import type { CodeRunRequest, JsonValue } from './types.js'

function request(call: CodeRunRequest['call']): CodeRunRequest {
  return { code: '', bindings: ['t'], call }
}

describe.each<ReplyFlush>(['microtask', 'immediate'])('HostCalls (%s flush)', (flush) => {
  test('calls that finish before the flush arrive as one batch, in the order they finished', async () => {
    const batches: [string, number][] = []
    const calls = new HostCalls(request(async (_name, args) => args), {}, flush, (batch, count) => batches.push([batch, count]))
    calls.dispatch(1, 't', '{"a":1}')
    calls.dispatch(2, 't', '[2]')
    expect(calls.idle).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(batches).toEqual([['[[1,1,{"a":1}],[2,1,[2]]]', 2]])
    expect(calls.dispatched).toBe(2)
    expect(calls.idle).toBe(true)
  })

  test('a rejected or synchronously throwing call settles as a rejection entry with its message', async () => {
    const batches: string[] = []
    const calls = new HostCalls(
      request((name) => {
        if (name === 'sync') throw new Error('thrown')
        return Promise.reject(new Error('rejected'))
      }),
      {},
      flush,
      (batch) => batches.push(batch),
    )
    calls.dispatch(1, 'sync', '{}')
    calls.dispatch(2, 'async', '{}')
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(batches).toEqual(['[[1,0,"thrown"],[2,0,"rejected"]]'])
  })

  test('close aborts the signal of calls in flight and drops their late results', async () => {
    const batches: string[] = []
    let seen: AbortSignal | undefined
    let answer: (value: JsonValue) => void = () => undefined
    const calls = new HostCalls(
      request((_name, _args, signal) => {
        seen = signal
        return new Promise((resolve) => (answer = resolve))
      }),
      {},
      flush,
      (batch) => batches.push(batch),
    )
    calls.dispatch(1, 't', '{}')
    calls.close()
    expect(seen?.aborted).toBe(true)
    answer('late')
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(batches).toEqual([])
    calls.dispatch(2, 't', '{}')
    expect(calls.dispatched).toBe(1)
  })
})
