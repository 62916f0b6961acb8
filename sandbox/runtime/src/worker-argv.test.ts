import { afterEach, expect, test } from 'vitest'
import { workerExecArgv } from './worker-argv.js'

const original = process.execArgv
afterEach(() => {
  process.execArgv = original
})

test('a worker gets the process execArgv without --input-type, in either spelling', () => {
  process.execArgv = ['--conditions=x', '--input-type=module', '--max-old-space-size=512', '--input-type', 'commonjs', '--no-warnings']
  expect(workerExecArgv()).toEqual(['--conditions=x', '--max-old-space-size=512', '--no-warnings'])
  process.execArgv = []
  expect(workerExecArgv()).toEqual([])
})
