/**
 * The output ledger gives identical results on every backend (issue 10: "UTF-8 counted exactly on both
 * backends, lone surrogates included, identical on both"): the exact-budget cases and an empty-log
 * flood, run on QuickJS worker, QuickJS inline and isolated-vm, compared with each other.
 */
import type { CodeRuntime, JsonValue } from '@ptc/sandbox'
import { createIsolatedVmRuntime, isolatedVmAvailability } from '@ptc/sandbox-isolated-vm'
import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'
import { afterAll, expect, test } from 'vitest'
import { OUTPUT_CASES } from './output.cases.js'

const ivm = isolatedVmAvailability()
const runtimes: [string, CodeRuntime][] = [
  ['quickjs worker', createQuickJSRuntime({ isolation: 'worker', poolSize: 1 })],
  ['quickjs inline', createQuickJSRuntime({ isolation: 'inline' })],
]
if (ivm.available) runtimes.push(['isolated-vm', createIsolatedVmRuntime()])
afterAll(() => Promise.all(runtimes.map(([, rt]) => rt.dispose())))

const call = async (name: string, args: JsonValue): Promise<JsonValue> => ({ name, args })
const programs = [
  ...OUTPUT_CASES.map((c) => ({ code: c.code, maxOutputBytes: c.maxOutputBytes })),
  { code: 'for (let i = 0; i < 300000; i++) console.log()', maxOutputBytes: 1000 },
  { code: 'for (let i = 0; i < 1000; i++) console.log("\\uD800x", i)', maxOutputBytes: 5000 },
]

test(`every backend gives the same output results${ivm.available ? '' : ` (isolated-vm left out: ${ivm.reason})`}`, async () => {
  for (const p of programs) {
    const seen: { backend: string; outcome: unknown }[] = []
    for (const [backend, rt] of runtimes) {
      const r = await rt.run({
        code: p.code,
        bindings: [],
        call,
        limits: { maxOutputBytes: p.maxOutputBytes, wallMs: 30_000, cpuMs: 10_000 },
      })
      seen.push({ backend, outcome: { kind: r.error?.kind, logs: r.logs, value: r.value } })
    }
    const first = seen[0]?.outcome
    for (const s of seen)
      expect(s.outcome, `${s.backend} vs ${seen[0]?.backend}: ${p.code} with ${p.maxOutputBytes} bytes`).toEqual(first)
  }
}, 60_000)
