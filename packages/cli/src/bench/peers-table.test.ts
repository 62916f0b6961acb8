import { describe, expect, test } from 'vitest'
import { peersTable } from './peers-table.js'
import type { BenchJson, BenchResult } from './scripts.js'

const figures = (group: string, seq: number, par: number, samples = [seq]): BenchResult[] => [
  {
    group,
    case: 'sequential',
    median: seq,
    unit: 'µs/call',
    better: 'lower',
    spread: { min: Math.min(...samples), max: Math.max(...samples), samples },
  },
  { group, case: 'Promise.all', median: par, unit: 'µs/call', better: 'lower' },
  { group, case: 'cold first run', median: 123.4, unit: 'ms', better: 'lower' },
]

const json: BenchJson = {
  script: 'peers',
  title: 'test',
  machine: 'test machine',
  quick: true,
  results: [
    ...figures('plain Node', 0.3, 0.5),
    ...figures('ptc QuickJS inline, whole path', 20, 10, [20, 18, 27]),
    ...figures('peer A 1.0.0', 40, 50),
    ...figures('peer C 3.0.0', 80, 25),
  ],
  runtimes: [
    { group: 'plain Node', kind: 'baseline', method: 'no sandbox' },
    { group: 'ptc QuickJS inline, whole path', kind: 'ptc', method: 'run_code' },
    { group: 'peer A 1.0.0', kind: 'peer', method: 'a' },
    { group: 'peer B 2.0.0', kind: 'peer', method: 'b', error: "Cannot find package 'peer-b'\n    at resolve" },
    { group: 'peer C 3.0.0', kind: 'peer', method: 'c' },
  ],
  notes: ['Method: interleaved processes.', 'peer B: caveat.'],
}

describe('peersTable', () => {
  test('one row per runtime in the given order, one column per figure, the spread (max/min) beside a median taken across processes', () => {
    const lines = peersTable(json)
    expect(lines.slice(0, 7)).toEqual([
      '| runtime | sequential (µs/call) | Promise.all (µs/call) | cold first run (ms) |',
      '|---|---|---|---|',
      '| plain Node | 0.30 | 0.50 | 123 |',
      '| ptc QuickJS inline, whole path | 20.0 (1.50x) | 10.0 | 123 |',
      '| peer A 1.0.0 | 40.0 | 50.0 | 123 |',
      "| peer B 2.0.0 | failed: Cannot find package 'peer-b' | — | — |",
      '| peer C 3.0.0 | 80.0 | 25.0 | 123 |',
    ])
  })

  test('each ptc row against the best peer of each figure, failed peers left out; then the notes', () => {
    const lines = peersTable(json)
    expect(lines.slice(7)).toEqual([
      '',
      '| ptc against the best peer (time per call; below 1 = ptc faster) | sequential (best peer: peer A 1.0.0, 40.0 µs/call) | Promise.all (best peer: peer C 3.0.0, 25.0 µs/call) |',
      '|---|---|---|',
      '| ptc QuickJS inline, whole path | 0.50x | 0.40x |',
      '',
      '- Method: interleaved processes.',
      '- peer B: caveat.',
    ])
  })

  test('no ratios without a measured peer; a run where everything failed still shows each error', () => {
    const failed: BenchJson = {
      ...json,
      results: [],
      runtimes: [{ group: 'peer A', kind: 'peer', method: 'a', error: 'boom' }],
      notes: [],
    }
    expect(peersTable(failed)).toEqual(['| runtime | result |', '|---|---|', '| peer A | failed: boom |'])
    const noPeers: BenchJson = { ...json, runtimes: (json.runtimes ?? []).filter((r) => r.kind !== 'peer'), notes: [] }
    expect(peersTable(noPeers).some((line) => line.includes('best peer'))).toBe(false)
  })
})
