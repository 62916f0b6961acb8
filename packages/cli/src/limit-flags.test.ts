import { DEFAULT_LIMITS } from '@ptc/sandbox'
import { describe, expect, test } from 'vitest'
import { CliError } from './errors.js'
import { limitFlags, LIMITS_USAGE } from './limit-flags.js'
import { CLI_DEFAULT_LIMITS, CLI_DEFAULT_MAX_PARALLEL, mergeLimits } from './runtime.js'

describe('the CLI default limits', () => {
  test('are sized for a model’s context: no looser than the sandbox’s anywhere, output and time much tighter', () => {
    for (const key of Object.keys(DEFAULT_LIMITS) as (keyof typeof DEFAULT_LIMITS)[])
      expect(CLI_DEFAULT_LIMITS[key]).toBeLessThanOrEqual(DEFAULT_LIMITS[key])
    expect(CLI_DEFAULT_LIMITS.maxOutputBytes).toBeLessThanOrEqual(64 * 1024)
    expect(CLI_DEFAULT_LIMITS.wallMs).toBeLessThan(60_000)
    expect(Object.isFrozen(CLI_DEFAULT_LIMITS)).toBe(true)
  })

  test('the usage shows every default', () => {
    const d = CLI_DEFAULT_LIMITS
    for (const shown of [
      `default ${d.cpuMs}`,
      `default ${d.wallMs}`,
      `default ${d.memoryBytes / 1024 / 1024}`,
      `default ${d.maxOutputBytes}`,
      `default ${d.maxSubCalls}`,
      `${d.maxPendingSubCalls} wait`,
      `default ${CLI_DEFAULT_MAX_PARALLEL}`,
    ]) {
      expect(LIMITS_USAGE).toContain(shown)
    }
  })
})

describe('mergeLimits', () => {
  test('CLI defaults, then the config file’s limits, then the flags', () => {
    expect(mergeLimits()).toEqual(CLI_DEFAULT_LIMITS)
    const merged = mergeLimits({ cpuMs: 5000, maxOutputBytes: 4096 }, { maxOutputBytes: 100, wallMs: 2000 })
    expect(merged).toEqual({ ...CLI_DEFAULT_LIMITS, cpuMs: 5000, wallMs: 2000, maxOutputBytes: 100 })
  })

  test('an undefined limit in a layer keeps the one before (a config file written in JavaScript)', () => {
    const config = { cpuMs: undefined, wallMs: 3000 } as unknown as Partial<typeof CLI_DEFAULT_LIMITS>
    expect(mergeLimits(config, {})).toEqual({ ...CLI_DEFAULT_LIMITS, wallMs: 3000 })
    expect(mergeLimits({ cpuMs: 7 }, { cpuMs: undefined } as unknown as Partial<typeof CLI_DEFAULT_LIMITS>).cpuMs).toBe(
      7,
    )
  })

  test('leaves the defaults alone', () => {
    mergeLimits({ cpuMs: 1 })
    expect(CLI_DEFAULT_LIMITS.cpuMs).toBe(10_000)
  })
})

describe('limitFlags', () => {
  test('each flag becomes its limit; absent flags are absent', () => {
    expect(limitFlags({})).toEqual({})
    expect(
      limitFlags({
        cpu: '100',
        wall: '200',
        memory: '64',
        'max-output': '4096',
        'max-sub-calls': '5',
        'max-result-chars': '1000',
        'max-argument-chars': '2000',
      }),
    ).toEqual({
      cpuMs: 100,
      wallMs: 200,
      memoryBytes: 64 * 1024 * 1024,
      maxOutputBytes: 4096,
      maxSubCalls: 5,
      maxResultChars: 1000,
      maxArgumentChars: 2000,
    })
  })

  test('--timeout sets CPU and wall; --cpu or --wall wins over it', () => {
    expect(limitFlags({ timeout: '300' })).toEqual({ cpuMs: 300, wallMs: 300 })
    expect(limitFlags({ timeout: '300', wall: '900' })).toEqual({ cpuMs: 300, wallMs: 900 })
    expect(limitFlags({ timeout: '300', cpu: '50' })).toEqual({ cpuMs: 50, wallMs: 300 })
  })

  test('a malformed value is a usage error naming the flag', () => {
    expect(() => limitFlags({ 'max-output': '32k' })).toThrow(
      new CliError('USAGE', '--max-output must be a positive whole number of bytes, not "32k"'),
    )
    expect(() => limitFlags({ 'max-sub-calls': '0' })).toThrow(
      /--max-sub-calls must be a positive whole number of calls/,
    )
    expect(() => limitFlags({ 'max-result-chars': '16M' })).toThrow(
      /--max-result-chars must be a positive whole number of characters, not "16M"/,
    )
    expect(() => limitFlags({ 'max-argument-chars': '-1' })).toThrow(
      /--max-argument-chars must be a positive whole number of characters, not "-1"/,
    )
    expect(() => limitFlags({ wall: String(2 ** 31) })).toThrow(/--wall must be at most 2147483647 milliseconds/)
  })
})
