/**
 * The checks `pnpm test` runs before the suite, at once: the type check (`pnpm typecheck`), the lint
 * (`pnpm lint`) and the formatter's check (`pnpm format:check`). Run one after another they would hold the
 * suite twice as long on CI's two cores. Each output is printed whole under its name; exit 1 if any failed.
 *
 *   node --import tsx scripts/checks.ts   (the start of `pnpm test`)
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

const CHECKS: readonly { readonly name: string; readonly bin: string; readonly args: readonly string[] }[] = [
  { name: 'typecheck (tsc -p tsconfig.json)', bin: 'tsc', args: ['-p', 'tsconfig.json'] },
  { name: 'lint (eslint .)', bin: 'eslint', args: ['.'] },
  { name: 'format (biome format .)', bin: 'biome', args: ['format', '.'] },
]

function check(name: string, bin: string, args: readonly string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const started = performance.now()
    const child = spawn(join(ROOT, 'node_modules/.bin', bin), args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    child.on('error', (error) => {
      process.stdout.write(`✗ ${name}: could not start: ${error.message}\n`)
      resolve(false)
    })
    child.on('close', (code, signal) => {
      const seconds = ((performance.now() - started) / 1000).toFixed(1)
      const ok = code === 0
      process.stdout.write(
        `${ok ? '✓' : '✗'} ${name}: ` +
          `${ok ? 'passed' : signal === null ? `exit ${String(code)}` : `killed by ${signal}`} in ${seconds} s\n`,
      )
      if (output.trim() !== '') process.stdout.write(`${output.trimEnd()}\n`)
      resolve(ok)
    })
  })
}

const results = await Promise.all(CHECKS.map(({ name, bin, args }) => check(name, bin, args)))
if (results.includes(false)) process.exitCode = 1
