import { afterEach, describe, expect, test, vi } from 'vitest'
import { CLEAR_LINE, progressLine, type ProgressCounts } from './progress.js'

/** A stream that says it is a terminal (or not), with what was written to it. */
function fakeStream(columns = 80, isTTY = true): { stream: NodeJS.WritableStream; written: () => string } {
  let text = ''
  const stream = {
    isTTY,
    columns,
    write: (chunk: string) => ((text += chunk), true),
  } as unknown as NodeJS.WritableStream
  return { stream, written: () => text }
}

/** A progress line on `stream` whose clock and counts the test moves. */
function controlled(stream: NodeJS.WritableStream, env: Record<string, string> = { TERM: 'xterm' }) {
  let clock = 0
  let counts: ProgressCounts = { started: 0, settled: 0 }
  const line = progressLine(stream, { counts: () => counts, now: () => clock, env })
  const advance = async (ms: number): Promise<void> => {
    clock += ms
    await vi.advanceTimersByTimeAsync(ms)
  }
  return { line, advance, setCounts: (c: ProgressCounts) => void (counts = c) }
}

afterEach(() => void vi.useRealTimers())

describe('progressLine', () => {
  test('after a second, shows elapsed time and sub-calls in place; stop clears it', async () => {
    vi.useFakeTimers()
    const { stream, written } = fakeStream()
    const { line, advance, setCounts } = controlled(stream)
    line.start()
    await advance(900)
    expect(written()).toBe('')
    setCounts({ started: 2, settled: 1 })
    await advance(100)
    expect(written()).toBe(`${CLEAR_LINE}ptc: running 1.0 s; sub-calls: 2 started, 1 settled`)
    setCounts({ started: 3, settled: 3 })
    await advance(1500)
    expect(written().endsWith(`${CLEAR_LINE}ptc: running 2.5 s; sub-calls: 3 started, 3 settled`)).toBe(true)
    const before = written().length
    line.stop()
    await advance(1000)
    expect(written().slice(before)).toBe(CLEAR_LINE)
  })

  test('a run shorter than a second never shows it and stop writes nothing', async () => {
    vi.useFakeTimers()
    const { stream, written } = fakeStream()
    const { line, advance } = controlled(stream)
    line.start()
    await advance(500)
    line.stop()
    line.stop()
    await advance(2000)
    expect(written()).toBe('')
  })

  test('never on a stream that is not a terminal, nor with TERM=dumb', async () => {
    vi.useFakeTimers()
    const pipe = fakeStream(80, false)
    const dumb = fakeStream()
    for (const { line, advance } of [controlled(pipe.stream), controlled(dumb.stream, { TERM: 'dumb' })]) {
      line.start()
      await advance(3000)
      line.stop()
    }
    expect(pipe.written()).toBe('')
    expect(dumb.written()).toBe('')
  })

  test('suspended, it is cleared and not redrawn until resumed (an approval prompt)', async () => {
    vi.useFakeTimers()
    const { stream, written } = fakeStream()
    const { line, advance } = controlled(stream)
    line.start()
    await advance(1000)
    const at = written().length
    const resume = line.suspend()
    await advance(2000)
    expect(written().slice(at)).toBe(CLEAR_LINE)
    resume()
    resume() // a second call changes nothing
    await advance(100)
    expect(written().slice(at)).toBe(`${CLEAR_LINE}${CLEAR_LINE}ptc: running 3.1 s; sub-calls: 0 started, 0 settled`)
    line.stop()
  })

  test('a line wider than the terminal is cut, so that it never wraps', async () => {
    vi.useFakeTimers()
    const { stream, written } = fakeStream(30)
    const { line, advance } = controlled(stream)
    line.start()
    await advance(1000)
    line.stop()
    const drawn = written().split(CLEAR_LINE)[1] ?? ''
    expect(drawn).toBe('ptc: running 1.0 s; sub-call…')
    expect(drawn.length).toBeLessThan(30)
  })

  test('its timer never keeps the process alive, and it clears itself if the process exits while it shows', () => {
    const { stream } = fakeStream()
    const setInterval = vi.spyOn(globalThis, 'setInterval')
    const exitListeners = process.listenerCount('exit')
    const line = progressLine(stream, { counts: () => ({ started: 0, settled: 0 }), env: { TERM: 'xterm' } })
    line.start()
    const timer = setInterval.mock.results[0]?.value as NodeJS.Timeout
    expect(timer.hasRef()).toBe(false)
    expect(process.listenerCount('exit')).toBe(exitListeners + 1)
    line.stop()
    expect(process.listenerCount('exit')).toBe(exitListeners)
    setInterval.mockRestore()
  })
})
