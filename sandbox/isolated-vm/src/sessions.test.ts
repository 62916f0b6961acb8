/**
 * Sandbox sessions on isolated-vm: a session is a live isolate kept in its engine between runs. These
 * tests run real isolates, in engine child processes (and in-process with `containment: 'none'`).
 */
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { SandboxUsageError } from '@ptc/sandbox'
import type { CodeRunRequest, CodeRunResult, CodeRunSessionInfo, JsonValue } from '@ptc/sandbox'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createIsolatedVmRuntime, isolatedVmAvailability } from './index.js'
import type { IsolatedVmRuntime, IsolatedVmRuntimeOptions } from './index.js'
import { cpuGrowth, isAlive, sleep } from './test-helpers.js'

const availability = isolatedVmAvailability()

/** The host side of the tests' tools: `double({ n })`, `fail()` (rejects), anything else echoes its arguments. */
async function call(name: string, args: JsonValue): Promise<JsonValue> {
  await null
  if (name === 'double') return (args as { n: number }).n * 2
  if (name === 'fail') throw new Error('the tool failed on purpose')
  return args
}

function request(code: string, extra: Partial<CodeRunRequest> = {}): CodeRunRequest {
  return { code, bindings: ['double', 'fail', 'echo', 'hold'], call, language: 'javascript', ...extra }
}

/** The session part of a session run's result (failing the test when it is missing). */
function info(result: CodeRunResult): CodeRunSessionInfo {
  expect(result.session, JSON.stringify(result)).toBeDefined()
  return result.session as CodeRunSessionInfo
}

/** A tool `hold` that waits until `release()`; `entered` resolves once the program called it. */
function holdTool(): { call: CodeRunRequest['call']; release(): void; entered: Promise<void> } {
  let release!: () => void
  let entered!: () => void
  const released = new Promise<JsonValue>((resolve) => (release = () => resolve(null)))
  const inside = new Promise<void>((resolve) => (entered = resolve))
  return {
    call: (name, args) => (name === 'hold' ? (entered(), released) : call(name, args)),
    release,
    entered: inside,
  }
}

/** Waits (bounded) until `check` holds. */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await sleep(50)
  expect(check(), what).toBe(true)
}

describe.skipIf(!availability.available)(
  `isolated-vm sandbox sessions${availability.available ? '' : ` (skipped: ${availability.reason})`}`,
  () => {
    const runtimes: IsolatedVmRuntime[] = []
    const make = (options: IsolatedVmRuntimeOptions = {}): IsolatedVmRuntime => {
      const created = createIsolatedVmRuntime({ processes: 1, ...options })
      runtimes.push(created)
      return created
    }
    afterAll(() => Promise.all(runtimes.splice(0).map((r) => r.dispose())))

    /** The shared runtime: two engine processes, one run each. */
    let rt: IsolatedVmRuntime
    let keys = 0
    /** A session key no other test uses. */
    const fresh = (name: string): string => `${name}-${++keys}`
    const run = (
      session: string | undefined,
      code: string,
      extra: Partial<CodeRunRequest> = {},
      on: IsolatedVmRuntime = rt,
    ): Promise<CodeRunResult> => on.run(request(code, { ...(session === undefined ? {} : { session }), ...extra }))
    /** A run expected to succeed: its value. */
    const value = async (
      session: string | undefined,
      code: string,
      extra: Partial<CodeRunRequest> = {},
      on: IsolatedVmRuntime = rt,
    ): Promise<JsonValue | undefined> => {
      const result = await run(session, code, extra, on)
      expect(result.error, `${code}: ${JSON.stringify(result.error)}`).toBeUndefined()
      return result.value
    }

    test('a durable run is refused at once: isolated-vm cannot suspend a run', async () => {
      await expect(rt.run(request('return 1', { durable: { key: 'k' } }))).rejects.toThrow(
        /isolated-vm cannot suspend a run/,
      )
    })

    beforeAll(async () => {
      rt = make({ processes: 2 })
      await Promise.all([value(undefined, 'return 1'), value(undefined, 'return 1')])
    })

    test('three sessions interleaved with plain runs, two at a time on two engine processes, each keep exactly their own state', async () => {
      const sessions = [fresh('mix-a'), fresh('mix-b'), fresh('mix-c')]
      for (const s of sessions) await value(s, `const tag = ${JSON.stringify(s)}; let count = 0; const seen = []`)
      // 20 rounds; each runs two of (a session's next program, a plain run), never two of one session.
      const counts = new Map(sessions.map((s) => [s, 0]))
      const step = async (session: string | undefined): Promise<void> => {
        if (session === undefined) {
          expect(
            await value(
              undefined,
              'const r = [typeof tag, typeof count]; globalThis.tag = "plain"; await tools.echo({}); return r',
            ),
          ).toEqual(['undefined', 'undefined'])
          return
        }
        const n = (counts.get(session) as number) + 1
        counts.set(session, n)
        const got = await run(
          session,
          'count += 1; seen.push(count); await tools.echo({}); return [tag, count, seen.length]',
        )
        expect(got.value).toEqual([session, n, n])
        expect(info(got)).toMatchObject({ fresh: false, kept: true, runs: n + 1 })
      }
      const pool: (string | undefined)[] = [...sessions, undefined]
      for (let round = 0; round < 20; round++) {
        const first = pool[round % pool.length]
        const second = pool[(round * 3 + 1) % pool.length]
        await Promise.all(first === second ? [step(first)] : [step(first), step(second)])
      }
      for (const s of sessions) expect(await value(s, 'return [tag, count]')).toEqual([s, counts.get(s)])
    }, 30_000)

    test('result.session: fresh only on the first run, kept, the run count and the heap bytes held', async () => {
      const s = fresh('info')
      const first = info(await run(s, 'const x = 1'))
      expect(first).toMatchObject({ key: s, fresh: true, kept: true, runs: 1 })
      expect(first.bytes).toBeGreaterThan(0)
      expect(first.note).toBeUndefined()
      const second = info(await run(s, 'return x'))
      expect(second).toMatchObject({ key: s, fresh: false, kept: true, runs: 2 })
      expect(second.bytes).toBeGreaterThan(0)
      expect(info(await run(s, 'return x')).runs).toBe(3)
      expect((await run(undefined, 'return 1')).session).toBeUndefined()
    })

    test('a program that throws, overflows its stack, does not compile or returns what JSON cannot hold keeps the session', async () => {
      const s = fresh('clean-ends')
      const thrown = await run(
        s,
        'const before = 1\nglobalThis.alsoBefore = 2\nthrow new Error("stop here")\nconst after = 3',
      )
      expect(thrown.error?.kind).toBe('exception')
      expect(info(thrown).kept).toBe(true)
      const deep = await run(s, 'const depth = 1; function down(n) { return down(n + 1) + 1 } down(0)')
      expect(deep.error?.kind).toBe('exception')
      expect(deep.error?.message).toMatch(/call stack/)
      expect(info(deep).kept).toBe(true)
      const syntax = await run(s, 'return (')
      expect(syntax.error?.kind).toBe('syntax')
      expect(info(syntax)).toMatchObject({ kept: true, fresh: false })
      const invalid = await run(s, 'const fn = () => 1; return fn')
      expect(invalid.error?.kind).toBe('invalid-output')
      expect(info(invalid).kept).toBe(true)
      const big = await run(s, 'const huge = "y".repeat(2000); return huge', { limits: { maxOutputBytes: 100 } })
      expect(big.error?.kind).toBe('output-limit')
      expect(info(big).kept).toBe(true)
      expect(await value(s, 'return [before, alsoBefore, typeof after, depth, fn(), huge.length]')).toEqual([
        1,
        2,
        'undefined',
        1,
        1,
        2000,
      ])
    })

    const never = (name: string, args: JsonValue): Promise<JsonValue> =>
      name === 'hold' ? new Promise<JsonValue>(() => undefined) : call(name, args)
    for (const [how, code, limits] of [
      ['its CPU limit', 'globalThis.during = 1; while (true) {}', { cpuMs: 200 }],
      ['its wall limit (the guest waiting on a tool)', 'globalThis.during = 1; await tools.hold({})', { wallMs: 300 }],
      ['a log flood over maxOutputBytes', 'for (;;) console.log("flood")', { maxOutputBytes: 2000 }],
    ] as const) {
      test(`a run stopped by ${how} loses the session: the next run starts fresh, with a note saying why`, async () => {
        const s = fresh('stopped')
        await value(s, 'const earlier = "kept"')
        const stopped = await run(s, code, { limits, call: never })
        expect(stopped.error?.kind).toMatch(/timeout|output-limit/)
        expect(info(stopped)).toMatchObject({ kept: false, bytes: 0, fresh: false })
        expect(info(stopped).note).toContain(`ended as ${stopped.error?.kind ?? ''}`)
        const next = await run(s, 'return [typeof earlier, typeof during]')
        expect(next.value).toEqual(['undefined', 'undefined'])
        expect(info(next)).toMatchObject({ fresh: true, kept: true })
        expect(info(next).note).toMatch(
          new RegExp(`earlier state was dropped: .*ended as ${stopped.error?.kind ?? ''}`),
        )
        expect(info(await run(s, 'return 1')).note).toBeUndefined()
      })
    }

    test('an aborted run loses the session', async () => {
      const s = fresh('abort')
      await value(s, 'const earlier = "kept"')
      const controller = new AbortController()
      const hold = holdTool()
      const running = run(s, 'await tools.hold({}); return 1', { call: hold.call, signal: controller.signal })
      await hold.entered
      controller.abort()
      const aborted = await running
      expect(aborted.error?.kind).toBe('abort')
      expect(info(aborted).kept).toBe(false)
      const next = await run(s, 'return typeof earlier')
      expect(next.value).toBe('undefined')
      expect(info(next).fresh).toBe(true)
      expect(info(next).note).toMatch(/ended as abort/)
    })

    test('an engine process that waits for a core past the grace after an answer is not killed for it', async () => {
      const own = make()
      const s = fresh('starved')
      expect(await value(s, 'globalThis.kept = 41; return 1', {}, own)).toBe(1)
      const [pid] = own.processIds
      if (pid === undefined) throw new Error('no engine process')
      // The program answers with a call in flight and 40 ms of jobs left; when the answer ends the call (its signal
      // aborts) the engine process has yet to confirm the run ended. It is stopped then, as a process a loaded
      // machine does not schedule, for six of its 100 ms graces: it used no CPU, so it is waited for, not killed.
      let stopped = false
      const stopOnAbort: CodeRunRequest['call'] = (_name, _args, signal) =>
        new Promise<JsonValue>(() => {
          signal?.addEventListener('abort', () => {
            process.kill(pid, 'SIGSTOP')
            stopped = true
            setTimeout(() => process.kill(pid, 'SIGCONT'), 600)
          })
        })
      const code =
        'tools.hold({}).catch(() => 0)\nPromise.resolve().then(() => 0).then(() => 0).then(() => { const t = Date.now(); while (Date.now() - t < 40) {} })\nreturn 2'
      const answered = await run(s, code, { call: stopOnAbort }, own)
      expect(stopped).toBe(true)
      expect(answered.value).toBe(2)
      // The engine's own wait for the program's jobs (wall time, in the stopped process) ran out: it let the session
      // go itself, and the process lives on.
      expect(info(answered).note ?? '', JSON.stringify(answered.session)).not.toMatch(/killed/)
      expect(own.processIds).toEqual([pid])
      expect(await value(s, 'return typeof kept', {}, own)).toBe(info(answered).kept ? 'number' : 'undefined')
      expect(own.processIds).toEqual([pid])
    })

    test('jobs a program leaves behind run on; one still busy past the end loses the session, and the runtime is fine', async () => {
      const s = fresh('leftover')
      const first = await run(
        s,
        'Promise.resolve().then(() => 0).then(() => { globalThis.late = 1 }); return typeof globalThis.late',
      )
      expect(first.value).toBe('undefined')
      expect(await value(s, 'return globalThis.late')).toBe(1)
      // The loop runs after the job that reports the program's value.
      const busy = await run(
        s,
        'Promise.resolve().then(() => 0).then(() => 0).then(() => { for (;;) {} }); return "answered"',
      )
      expect(busy.value).toBe('answered')
      expect(info(busy).kept).toBe(false)
      expect(info(busy).note).toMatch(/jobs the program left/)
      const next = await run(s, 'return typeof late')
      expect(next.value).toBe('undefined')
      expect(info(next).fresh).toBe(true)
      expect(await value(undefined, 'return 2')).toBe(2)
    })

    test('endSession drops the session (true; the next run is fresh); unknown keys resolve false; a bad key is misuse', async () => {
      const s = fresh('end')
      await value(s, 'const x = 1')
      expect(await rt.endSession?.(s)).toBe(true)
      const after = await run(s, 'return typeof x')
      expect(after.value).toBe('undefined')
      expect(info(after)).toMatchObject({ fresh: true, runs: 1 })
      expect(info(after).note).toBeUndefined()
      expect(await rt.endSession?.(fresh('never-used'))).toBe(false)
      expect(await rt.endSession?.(s)).toBe(true)
      expect(await rt.endSession?.(s)).toBe(false)
      await expect(rt.endSession?.('')).rejects.toBeInstanceOf(SandboxUsageError)
      expect('suspendSession' in rt).toBe(false)
      expect('resumeSession' in rt).toBe(false)
    })

    test('a session idle past idleTtlMs is dropped: its next run is fresh, with a note naming idleTtlMs', async () => {
      const limited = make({ sessions: { idleTtlMs: 50 } })
      expect(info(await run('t', 'const x = 1', {}, limited)).kept).toBe(true)
      await sleep(300)
      const next = await run('t', 'return typeof x', {}, limited)
      expect(next.value).toBe('undefined')
      expect(info(next).fresh).toBe(true)
      expect(info(next).note).toMatch(/idleTtlMs/)
    })

    test('past maxSessions a new session drops the least recently used one (fresh, note naming maxSessions); the others keep theirs', async () => {
      const limited = make({ sessions: { maxSessions: 2 } })
      await value('a', 'const who = "a"', {}, limited)
      await value('b', 'const who = "b"', {}, limited)
      await value('c', 'const who = "c"', {}, limited)
      const b = await run('b', 'return who', {}, limited)
      expect(b.value).toBe('b')
      expect(info(b).fresh).toBe(false)
      const a = await run('a', 'return typeof who', {}, limited)
      expect(a.value).toBe('undefined')
      expect(info(a)).toMatchObject({ fresh: true })
      expect(info(a).note).toMatch(/maxSessions/)
      expect(await value('b', 'return who', {}, limited)).toBe('b')
    })

    test('a run that leaves more heap than maxSessionBytes is not kept (note naming maxSessionBytes); the next run is fresh', async () => {
      const limited = make({ sessions: { maxSessionBytes: 4 * 1024 * 1024 } })
      const small = await run('big', 'const before = "small"', {}, limited)
      expect(info(small)).toMatchObject({ kept: true })
      expect(info(small).bytes).toBeLessThanOrEqual(4 * 1024 * 1024)
      const big = await run(
        'big',
        'globalThis.huge = Array.from({ length: 200000 }, (_, i) => "item " + i); return huge.length',
        {},
        limited,
      )
      expect(big.value).toBe(200000)
      expect(info(big)).toMatchObject({ kept: false, bytes: 0 })
      expect(info(big).note).toMatch(/maxSessionBytes/)
      const next = await run('big', 'return [typeof before, typeof huge]', {}, limited)
      expect(next.value).toEqual(['undefined', 'undefined'])
      expect(info(next)).toMatchObject({ fresh: true, kept: true })
      expect(info(next).note).toMatch(/maxSessionBytes/)
    })

    test('a session run waits for the engine keeping its isolate; one that ends while waiting leaves the session as it was', async () => {
      // Runs admitted beyond the one engine's place wait in the pool's queue.
      const own = make({ maxConcurrentRuns: 3 })
      await value('s', 'const x = 1', {}, own)
      // The only engine is busy: the session's run waits for it.
      const hold = holdTool()
      const plain = run(undefined, 'return await tools.hold({})', { call: hold.call }, own)
      await hold.entered
      const controller = new AbortController()
      const waiting = run('s', 'x = 2; return x', { signal: controller.signal }, own)
      await sleep(50)
      controller.abort()
      const aborted = await waiting
      expect(aborted.error?.kind).toBe('abort')
      expect(info(aborted)).toMatchObject({ kept: false, fresh: false })
      expect(info(aborted).note).toMatch(/before it started; the session keeps its state from before the run/)
      const timedOut = await run('s', 'x = 3; return x', { limits: { wallMs: 200 } }, own)
      expect(timedOut.error?.kind).toBe('timeout')
      expect(info(timedOut).kept).toBe(false)
      hold.release()
      await plain
      const next = await run('s', 'return x', {}, own)
      expect(next.value).toBe(1)
      expect(info(next)).toMatchObject({ fresh: false, kept: true })
      expect(info(next).note).toBeUndefined()
    })

    test('an engine process that dies takes its sessions with it: their next run is fresh, with a note; the runtime goes on', async () => {
      const own = make()
      await value('s', 'const x = 1', {}, own)
      expect(await value('s', 'return x', {}, own)).toBe(1)
      const pid = own.processIds[0] as number
      process.kill(pid, 'SIGKILL')
      await until(
        () => own.processIds.length === 1 && !own.processIds.includes(pid),
        'the killed engine process is replaced',
      )
      const next = await run('s', 'return typeof x', {}, own)
      expect(next.error).toBeUndefined()
      expect(next.value).toBe('undefined')
      expect(info(next)).toMatchObject({ fresh: true, kept: true })
      expect(info(next).note).toMatch(/engine .*is gone/)
      expect(await value('s', 'return typeof x', {}, own)).toBe('undefined')
      // A session whose engine dies during its run: the run is a crash, and the session starts over.
      const hold = holdTool()
      const running = run('s', 'const y = 1; await tools.hold({})', { call: hold.call }, own)
      await hold.entered
      process.kill(own.processIds[0] as number, 'SIGKILL')
      const crashed = await running
      expect(crashed.error?.kind).toBe('crash')
      expect(info(crashed).kept).toBe(false)
      await until(() => own.processIds.length === 1, 'the killed engine process is replaced')
      const after = await run('s', 'return typeof y', {}, own)
      expect(after.value).toBe('undefined')
      expect(info(after).fresh).toBe(true)
    })

    test('dispose with live sessions completes, kills the engine processes, and runs after it reject', async () => {
      const own = createIsolatedVmRuntime({ processes: 2 })
      await Promise.all([value('a', 'globalThis.x = [1, 2, 3]', {}, own), value('b', 'const y = 2', {}, own)])
      expect(await value('a', 'return x.length', {}, own)).toBe(3)
      const pids = [...own.processIds]
      await own.dispose()
      for (const pid of pids) expect(isAlive(pid)).toBe(false)
      await expect(run('a', 'return x', {}, own)).rejects.toMatchObject({
        name: 'SandboxUsageError',
        code: 'SANDBOX_DISPOSED',
      })
    })

    test.each(['process', 'none'])(
      'a pending session run keeps the host process alive until it settles (%s containment)',
      async (containment) => {
        const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm')).href
        const fixture = fileURLToPath(new URL('./fixtures/session-host.ts', import.meta.url))
        const { stdout } = await promisify(execFile)(
          process.execPath,
          ['--no-node-snapshot', '--conditions=@ptc/source', '--import', tsx, fixture, containment],
          { timeout: 15_000 },
        )
        expect(stdout.trim()).toBe('100')
      },
    )

    // A session program is stripped of its TypeScript (sucrase) and parsed whole (acorn, about 0.6 s per MiB
    // here): a long one on a worker thread, never on the host's, whose event loop serves every other run meanwhile.
    test.each([
      ['process', 'short', true, 2],
      ['process', 'long', false, 0],
      ['none', 'long', false, 0],
    ])(
      'who prepares session programs: %s containment, %s programs',
      async (containment, length, acornHere, strippedHere) => {
        const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm')).href
        const fixture = fileURLToPath(new URL('./fixtures/session-parse.ts', import.meta.url))
        const { stdout } = await promisify(execFile)(
          process.execPath,
          ['--no-node-snapshot', '--conditions=@ptc/source', '--import', tsx, fixture, containment, length],
          { timeout: 30_000 },
        )
        expect(JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null')).toEqual({ acornHere, strippedHere, value: 42 })
      },
    )

    describe("containment: 'none'", () => {
      let inline: IsolatedVmRuntime
      beforeAll(() => {
        inline = make({ containment: 'none' })
      })

      test('state is kept and isolated, a timed-out run loses the session, and endSession works', async () => {
        await value('a', 'const tag = "a"; let n = 0', {}, inline)
        await value('b', 'const tag = "b"', {}, inline)
        expect(await value('a', 'n += 1; return [tag, n, (await tools.double({ n: 2 }))]', {}, inline)).toEqual([
          'a',
          1,
          4,
        ])
        expect(await value(undefined, 'return typeof tag', {}, inline)).toBe('undefined')
        const stopped = await run('a', 'while (true) {}', { limits: { cpuMs: 100 } }, inline)
        expect(stopped.error?.kind).toBe('timeout')
        expect(info(stopped).kept).toBe(false)
        const next = await run('a', 'return typeof tag', {}, inline)
        expect(next.value).toBe('undefined')
        expect(info(next).note).toMatch(/ended as timeout/)
        expect(await value('b', 'return tag', {}, inline)).toBe('b')
        expect(await inline.endSession?.('b')).toBe(true)
        expect(await value('b', 'return typeof tag', {}, inline)).toBe('undefined')
      })

      test('dispose with live sessions completes, and nothing keeps running', async () => {
        const own = createIsolatedVmRuntime({ containment: 'none' })
        await value('a', 'globalThis.x = 1', {}, own)
        const leftover = await run(
          'b',
          'Promise.resolve().then(() => 0).then(() => 0).then(() => { for (;;) {} }); return 1',
          {},
          own,
        )
        expect(info(leftover).kept).toBe(false)
        await own.dispose()
        const growth = await cpuGrowth([], 100, 500)
        expect(growth.self).toBeLessThan(250)
      })
    })
  },
)
