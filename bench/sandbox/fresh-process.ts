/**
 * What the first-run benchmarks of this folder share: each sample is a script run in a fresh Node process (plain
 * `node`, built packages, nothing loaded or cached), in this checkout and, with `--compare DIR`, in another built
 * checkout of the repository, interleaved process by process; and the processes-per-case count from the command line.
 */
import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { argValues } from '../json.js'
import { median } from '../util.js'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The processes per case (the first bare number on the command line, default 5). */
export const processes = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 5)

/** The other checkout of `--compare DIR`, if one was given. */
export const compared: string | undefined = (() => {
  const dir = argValues('compare')[0]
  return dir === undefined ? undefined : resolve(dir)
})()

/** The checkouts measured: this one, then the compared one. */
export const roots: readonly string[] = compared === undefined ? [ROOT] : [ROOT, compared]

/**
 * Runs `script` (an ES module's text) in a fresh process in `root` with `flags` before it and `args` after it, and
 * returns the JSON of its last line; throws with its stderr when it failed.
 */
export function freshProcessJson(
  root: string,
  script: string,
  options: { flags?: readonly string[]; args?: readonly string[]; timeoutMs: number },
): unknown {
  const child = spawnSync(
    process.execPath,
    [
      ...(options.flags ?? []),
      '--input-type=module',
      '-e',
      script,
      ...(options.args === undefined ? [] : ['--', ...options.args]),
    ],
    {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
      timeout: options.timeoutMs,
    },
  )
  if (child.status !== 0) throw new Error(`child failed in ${root}: ${child.stderr}`)
  return JSON.parse(child.stdout.trim().split('\n').at(-1) as string)
}

/** `median ms (min-max)` of the samples. */
export function msCell(values: readonly number[]): string {
  return `${median(values).toFixed(1)} ms (${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)})`
}
