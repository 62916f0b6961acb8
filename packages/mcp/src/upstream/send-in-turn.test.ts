import type { Writable } from 'node:stream'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, test } from 'vitest'
import { sendInTurn } from './send-in-turn.js'

/** An upstream that answers each line it reads with a notification naming the line's `n`. */
const ECHO = `require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'echo', params: { n: JSON.parse(line).params.n } }) + '\\n')
})`

const COUNT = 40
/** Larger than the pipe's high-water mark (16 KiB): every write of one waits for a drain. */
const big = (n: number): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/message',
  params: { n, text: 'x'.repeat(64 * 1024) },
})

/** Sends COUNT large messages at once through `transport` (started on ECHO); the most `drain` listeners its pipe had at once, and the echoed order. */
async function burst(wrap: boolean): Promise<{ mostListeners: number; echoed: number[]; warnings: string[] }> {
  const raw = new StdioClientTransport({ command: process.execPath, args: ['-e', ECHO], stderr: 'pipe' })
  const transport = wrap ? sendInTurn(raw) : raw
  const echoed: number[] = []
  const all = new Promise<void>((resolve) => {
    transport.onmessage = (message) => {
      echoed.push((message as unknown as { params: { n: number } }).params.n)
      if (echoed.length === COUNT) resolve()
    }
  })
  const warnings: string[] = []
  const onWarning = (warning: Error): void => void warnings.push(warning.message)
  process.on('warning', onWarning)
  try {
    await transport.start()
    // The SDK's pipe to the upstream (private): watched for the listeners its writes add.
    const stdin = (raw as unknown as { _process: { stdin: Writable } })._process.stdin
    // Unwrapped, the listeners are expected: raised out of the way of the process warning it would print.
    if (!wrap) stdin.setMaxListeners(COUNT + 1)
    let mostListeners = 0
    stdin.on('newListener', (event) => {
      if (event === 'drain') mostListeners = Math.max(mostListeners, stdin.listenerCount('drain') + 1)
    })
    await Promise.all(Array.from({ length: COUNT }, (_, n) => transport.send(big(n))))
    await all
    await new Promise((resolve) => setImmediate(resolve)) // a warning is emitted on the next tick
    return { mostListeners, echoed, warnings }
  } finally {
    process.off('warning', onWarning)
    await transport.close()
  }
}

describe('sendInTurn', () => {
  test('the SDK stdio transport alone adds a drain listener per message written under backpressure', async () => {
    const { mostListeners, echoed } = await burst(false)
    expect(mostListeners).toBeGreaterThan(10)
    expect(echoed).toHaveLength(COUNT)
  })

  test('wrapped, at most one listener waits, no warning, every message arrives in the order sent', async () => {
    const { mostListeners, echoed, warnings } = await burst(true)
    expect(mostListeners).toBeLessThanOrEqual(1)
    expect(warnings).toEqual([])
    expect(echoed).toEqual(Array.from({ length: COUNT }, (_, n) => n))
  })

  test('a send that fails does not hold the next ones back', async () => {
    const sent: number[] = []
    let fail = true
    const transport = sendInTurn({
      send: async (message: JSONRPCMessage): Promise<void> => {
        if (fail) {
          fail = false
          throw new Error('Not connected')
        }
        sent.push((message as unknown as { params: { n: number } }).params.n)
      },
    })
    const first = transport.send(big(0))
    const second = transport.send(big(1))
    await expect(first).rejects.toThrow('Not connected')
    await expect(second).resolves.toBeUndefined()
    expect(sent).toEqual([1])
  })

  test('a request cancelled while it waits its turn is not sent, nor its cancellation; one already handed over is cancelled as usual', async () => {
    const written: string[] = []
    const blocked: (() => void)[] = []
    const transport = sendInTurn({
      // Each write waits for the test to let it through (a pipe that is full).
      send: (message: JSONRPCMessage): Promise<void> =>
        new Promise<void>((resolve) => {
          const m = message as { id?: number; method: string; params?: { requestId?: number } }
          written.push(m.method === 'notifications/cancelled' ? `cancel ${m.params?.requestId}` : `${m.method} ${m.id}`)
          blocked.push(resolve)
        }),
    })
    const request = (id: number): JSONRPCMessage => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'echo' },
    })
    const cancel = (id: number): JSONRPCMessage => ({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: id, reason: 'aborted' },
    })
    const sends = [transport.send(request(1)), transport.send(request(2)), transport.send(request(3))]
    await expect(transport.send(cancel(2))).resolves.toBeUndefined() // at once: request 2 never went
    const cancelFirst = transport.send(cancel(1)) // request 1 is being written: its cancellation follows it
    while (blocked.length > 0) {
      blocked.shift()?.()
      await new Promise((resolve) => setImmediate(resolve))
    }
    await Promise.all([...sends, cancelFirst])
    expect(written).toEqual(['tools/call 1', 'tools/call 3', 'cancel 1'])
  })
})
