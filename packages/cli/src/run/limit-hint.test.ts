import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { runCommand } from '../commands/run.js'
import { memoryIo } from '../fixtures/io.js'
import { CLI_DEFAULT_LIMITS, mergeLimits } from '../runtime.js'
import { limitHint, limitSources } from './limit-hint.js'

const dir = mkdtempSync(join(tmpdir(), 'ptc-limit-hint-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const cpu = { kind: 'timeout', message: 'CPU time limit of 5000 ms exceeded' }

describe('limitHint', () => {
  test('names the setting, the flag and where the value came from', () => {
    const config = { limits: { cpuMs: 5000 }, shown: 'ptc.config.ts' }
    const limits = mergeLimits(config.limits)
    expect(limitHint(cpu, limits, limitSources(config, undefined))).toBe(
      'the run stopped at its CPU time limit of 5000 ms, set by limits.cpuMs in ptc.config.ts: raise it there or with --cpu MS (a flag wins over the config)',
    )
    expect(limitHint(cpu, mergeLimits(undefined, { cpuMs: 5000 }), limitSources(config, { cpuMs: 5000 }))).toMatch(
      /, set on the command line: raise it with --cpu MS/,
    )
    const output = { kind: 'output-limit', message: 'output limit of 32768 bytes (maxOutputBytes) exceeded: …' }
    expect(limitHint(output, CLI_DEFAULT_LIMITS, limitSources(undefined, undefined))).toBe(
      "the run stopped at its output limit of 32768 bytes (the CLI's default): raise it with limits.maxOutputBytes in the config or with --max-output BYTES",
    )
  })

  test('says nothing of a failure that is not a limit', () => {
    expect(
      limitHint({ kind: 'exception', message: 'Error: boom' }, CLI_DEFAULT_LIMITS, limitSources(undefined, undefined)),
    ).toBeUndefined()
    expect(
      limitHint(
        { kind: 'timeout', message: 'the tool call timed out' },
        CLI_DEFAULT_LIMITS,
        limitSources(undefined, undefined),
      ),
    ).toBeUndefined()
  })
})

test('ptc run: a program stopped at the CPU limit of the config is told which setting, in which file, and which flag', async () => {
  writeFileSync(join(dir, 'ptc.config.mjs'), 'export default { limits: { cpuMs: 300 } }\n')
  writeFileSync(join(dir, 'spin.js'), 'while (true) {}\n')
  const { io, stderr } = memoryIo(dir)
  expect(await runCommand(['spin.js', '--approve', 'no'], io)).toBe(1)
  expect(stderr()).toContain('the program failed (timeout): CPU time limit of 300 ms exceeded')
  expect(stderr()).toContain(
    'ptc: the run stopped at its CPU time limit of 300 ms, set by limits.cpuMs in ptc.config.mjs: raise it there or with --cpu MS',
  )
}, 30_000)
