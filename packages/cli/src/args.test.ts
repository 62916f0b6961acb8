import { describe, expect, test } from 'vitest'
import { parseCommandArgs } from './args.js'
import { CliError } from './errors.js'

const OPTIONS = { approve: { type: 'string' }, 'max-output': { type: 'string' }, json: { type: 'boolean' } } as const

function usageError(args: readonly string[]): string {
  try {
    parseCommandArgs('run', args, OPTIONS)
  } catch (error) {
    if (error instanceof CliError) return error.message
    throw error
  }
  throw new Error('no usage error')
}

describe('parseCommandArgs', () => {
  test('an unknown option a few edits from a known one names it', () => {
    expect(usageError(['--aprove', 'yes'])).toBe(
      "Unknown option '--aprove' (did you mean --approve?); see `ptc run --help`",
    )
    expect(usageError(['--max-ouput=5'])).toBe(
      "Unknown option '--max-ouput' (did you mean --max-output?); see `ptc run --help`",
    )
  })

  test('an unknown option far from every known one is named alone', () => {
    expect(usageError(['--colour'])).toBe("Unknown option '--colour'; see `ptc run --help`")
  })
})
