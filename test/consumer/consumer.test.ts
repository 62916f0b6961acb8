/**
 * ptc as a user gets it. Every workspace package is packed (`scripts/pack.ts`, the README's
 * `pnpm pack:all`); each tarball must hold only what a user needs and satisfy publint and
 * arethetypeswrong. Then the README's quick start runs in a new project in the system's temporary
 * folder, outside this repository: `ptc init`, `npm install` of the tarballs (third-party
 * dependencies from the npm registry), `npx ptc run`, the README's `host.ts` type-checked and run,
 * and `ptc run`, `check`, `sdk`, `log` and `serve --help` with a tools module that imports
 * `@ptc/tools`.
 *
 * npm runs with `--ignore-scripts`: the one install script in the tree is isolated-vm's native build
 * (minutes on 2 cores; the workspace's own install builds and tests it). So the project has no
 * isolated-vm binary, and the test checks what a user whose build failed sees.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { packAll, pnpmCommand, type PackedPackage } from '../../scripts/pack.js'
import { ROOT } from '../../scripts/build-js.js'
import { extractBlocks } from '../docs/blocks.js'
import { lintTarball } from './lint.js'

const work = realpathSync(mkdtempSync(join(tmpdir(), 'ptc-consumer-')))
const project = join(work, 'my-agent')
let packed: PackedPackage[] = []

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command to its end (never through a shell); `input` is written to its stdin. */
function run(command: string, args: readonly string[], cwd: string, input?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, NO_COLOR: '1', NODE_OPTIONS: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(input)
  })
}

/** `npx ptc …` in the project (the installed binary, found by npx in node_modules/.bin). */
const ptc = (args: readonly string[], cwd = project): Promise<Run> => run('npx', ['--no-install', 'ptc', ...args], cwd)

/** The run succeeded; otherwise its output is the failure message. */
function expectOk(result: Run, what: string): void {
  expect(
    result.code,
    `${what} exited ${String(result.code)}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`,
  ).toBe(0)
}

/** Writes the lines as the project's script `name` (ESM), runs it with node, and returns the JSON it printed. */
async function scriptOutput(name: string, lines: readonly string[]): Promise<unknown> {
  writeFileSync(join(project, name), `${lines.join('\n')}\n`)
  const result = await run(process.execPath, [name], project)
  expectOk(result, `node ${name}`)
  return JSON.parse(result.stdout) as unknown
}

/** The README's quick-start file `name` (a block with the flag `file=NAME`). */
function readmeFile(name: string): string {
  const block = extractBlocks('README.md', readFileSync(join(ROOT, 'README.md'), 'utf8')).find((b) =>
    b.flags.has(`file=${name}`),
  )
  if (block === undefined) throw new Error(`README.md has no block marked file=${name}`)
  return `${block.code}\n`
}

beforeAll(async () => {
  expect(relative(ROOT, work).startsWith('..'), `${work} must lie outside the repository`).toBe(true)
  packed = packAll({ out: join(work, 'packs'), log: (line) => void process.stderr.write(`test/consumer: ${line}\n`) })
  // The README: `node /path/to/ptc/packages/cli/bin/ptc.js init my-agent`, then `npm install` of every tarball.
  expectOk(await run(process.execPath, [join(ROOT, 'packages/cli/bin/ptc.js'), 'init', 'my-agent'], work), 'ptc init')
  const install = await run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--loglevel=error',
      ...packed.map((p) => p.tarball),
      '@types/node@20',
    ],
    project,
  )
  expectOk(install, 'npm install')
}, 600_000)

afterAll(() => rmSync(work, { recursive: true, force: true }))

describe('the packed tarballs', () => {
  test('every workspace package is packed', () => {
    const names = packed.map((p) => p.name).sort()
    expect(names).toEqual([
      '@ptc/adapters',
      '@ptc/bindings',
      '@ptc/cli',
      '@ptc/mcp',
      '@ptc/ptc',
      '@ptc/sandbox',
      '@ptc/sandbox-isolated-vm',
      '@ptc/sandbox-quickjs',
      '@ptc/tools',
    ])
  })

  test('each holds only dist/ (and bin/), README.md, LICENSE and a manifest without workspace ranges or the source condition', () => {
    for (const { name, tarball } of packed) {
      const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).trim().split('\n')
      const unexpected = files.filter(
        (f) => !/^package\/(dist\/|bin\/ptc\.js$|README\.md$|LICENSE$|package\.json$)/.test(f),
      )
      expect(unexpected, name).toEqual([])
      expect(files, name).toEqual(
        expect.arrayContaining(['package/README.md', 'package/LICENSE', 'package/package.json']),
      )
      expect(
        files.filter((f) => /\.test(-d)?\.|\/src\//.test(f)),
        name,
      ).toEqual([])
      const manifest = execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' })
      expect(manifest, name).not.toContain('workspace:')
      expect(manifest, name).not.toContain('@ptc/source')
      const parsed = JSON.parse(manifest) as { engines?: { node?: string }; license?: string }
      expect(parsed.engines?.node, name).toBe('>=20.11')
      expect(parsed.license, name).toBe('MIT')
    }
  })

  test('publint and arethetypeswrong report nothing for any of them', async () => {
    for (const { name, tarball } of packed) {
      const report = await lintTarball(tarball)
      expect(report, name).toEqual({ publint: [], types: [] })
    }
  }, 120_000)
})

describe('a project outside the repository, as the README says', () => {
  test('ptc init + npx ptc run: the config policy denies one order, its approval service allows one and refuses one', async () => {
    const result = await ptc(['run', 'program.ts'])
    expectOk(result, 'npx ptc run program.ts')
    expect(result.stdout).toMatch(/^apple: ordered 17 units \(PO-1001\)$/m)
    expect(result.stdout).toMatch(/^pear: not ordered: .*reject/im)
    expect(result.stdout).toMatch(/^plum: not ordered: .*598 units exceed the purchasing limit of 500/m)
    expect(result.stderr).toContain('config: ptc.config.ts')
  }, 60_000)

  test("the README's host.ts type-checks against the installed declarations and runs", async () => {
    writeFileSync(join(project, 'host.ts'), readmeFile('host.ts'))
    const tsconfig = {
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2023', 'ESNext.Disposable'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        types: ['node'],
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        noEmit: true,
      },
      files: ['host.ts', 'ptc.config.ts'],
    }
    writeFileSync(join(project, 'tsconfig.host.json'), JSON.stringify(tsconfig, null, 2))
    expectOk(
      await run('npx', ['--no-install', 'tsc', '-p', 'tsconfig.host.json'], project),
      'tsc -p tsconfig.host.json',
    )
    const host = await run('npx', ['--no-install', 'tsx', 'host.ts'], project)
    expectOk(host, 'npx tsx host.ts')
    expect(host.stdout).toContain("text: 'warmest: Lima (19 C)'")
  }, 120_000)

  test("the installed packages' errors carry their class names, codes and brands", async () => {
    // A bundler renames a class whose body names itself: when the branded base errors checked their brand
    // in a static method, a user saw `_ToolsError` as the name of every ToolsError.
    const names = await scriptOutput('error-names.mjs', [
      "import { ToolsError, ToolTimeoutError } from '@ptc/tools'",
      "import { SandboxUsageError } from '@ptc/sandbox'",
      "import { BindingsError } from '@ptc/bindings'",
      "import { McpError, McpServeUsageError } from '@ptc/mcp'",
      "import { CliError } from '@ptc/cli'",
      "import { SandboxBackendUnavailableError } from '@ptc/sandbox-isolated-vm'",
      "import { AdapterError, WireNameCollisionError } from '@ptc/adapters/shapes'",
      'const errors = [',
      "  new ToolsError('TOOL_ERROR', 'x'), new ToolTimeoutError(5), new SandboxUsageError('x'),",
      "  new BindingsError('INVALID_BINDING_NAMES', 'x'), new McpError('MCP_SERVE_USAGE', 'x'), new McpServeUsageError('x'),",
      "  new CliError('USAGE', 'x'), new SandboxBackendUnavailableError('missing-module', 'x'),",
      "  new AdapterError('WIRE_NAME_COLLISION', 'x'), new WireNameCollisionError('a_b', 'a.b', 'a_b'),",
      ']',
      'const bases = [ToolsError, ToolsError, SandboxUsageError, BindingsError, McpError, McpError, CliError, SandboxBackendUnavailableError, AdapterError, AdapterError]',
      'console.log(JSON.stringify(errors.map((e, i) => [e.name, e.code, e instanceof bases[i]])))',
    ])
    expect(names).toEqual([
      ['ToolsError', 'TOOL_ERROR', true],
      ['ToolTimeoutError', 'TOOL_TIMEOUT', true],
      ['SandboxUsageError', 'SANDBOX_MISUSE', true],
      ['BindingsError', 'INVALID_BINDING_NAMES', true],
      ['McpError', 'MCP_SERVE_USAGE', true],
      ['McpServeUsageError', 'MCP_SERVE_USAGE', true],
      ['CliError', 'USAGE', true],
      ['SandboxBackendUnavailableError', 'SANDBOX_BACKEND_UNAVAILABLE', true],
      ['AdapterError', 'WIRE_NAME_COLLISION', true],
      ['WireNameCollisionError', 'WIRE_NAME_COLLISION', true],
    ])
  }, 60_000)

  test('@ptc/adapters/shapes works with none of its optional peers installed; the root entry needs ai and zod, then works', async () => {
    // Optional peers are not installed by npm: ai is not in the project yet (zod may be, for the MCP SDK).
    expect(existsSync(join(project, 'node_modules/ai'))).toBe(false)
    const shapes = await scriptOutput('shapes.mjs', [
      "import { fromAnthropicToolUses, toAnthropicTools, toOpenAIResponsesTools } from '@ptc/adapters/shapes'",
      "const schemas = [{ name: 'fs.read', description: 'Read.', parameters: { type: 'object', properties: {} } }]",
      "const calls = fromAnthropicToolUses({ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'fs_read', input: {}, caller: { type: 'code_execution_20250825', tool_id: 'p' } }] }, ['fs.read'])",
      "console.log(JSON.stringify([toAnthropicTools(schemas, { allowedCallers: ['code_execution_20250825'] })[0], toOpenAIResponsesTools(schemas)[0].name, calls[0]]))",
    ])
    expect(shapes).toEqual([
      {
        name: 'fs_read',
        description: 'Read.',
        input_schema: { type: 'object', properties: {} },
        allowed_callers: ['code_execution_20250825'],
      },
      'fs_read',
      {
        type: 'tool_call',
        id: 't',
        name: 'fs.read',
        arguments: '{}',
        caller: { type: 'code_execution_20250825', id: 'p' },
      },
    ])
    writeFileSync(
      join(project, 'root.mjs'),
      "import { toAiSdkTools } from '@ptc/adapters'\nconsole.log(typeof toAiSdkTools)\n",
    )
    const without = await run(process.execPath, ['root.mjs'], project)
    expect(without.code).not.toBe(0)
    expect(without.stderr).toMatch(/Cannot find (package|module) 'ai'/)
    expectOk(
      await run(
        'npm',
        ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', 'ai@6', 'zod@4'],
        project,
      ),
      'npm install ai zod',
    )
    const withPeers = await run(process.execPath, ['root.mjs'], project)
    expectOk(withPeers, 'node root.mjs')
    expect(withPeers.stdout.trim()).toBe('function')
  }, 180_000)

  test('a script started as node --input-type=module -e runs on the worker runtime and exits without dispose()', () => {
    // Worker threads must not inherit --input-type (they failed to start), and idle workers must not keep the
    // process alive (a run, then nothing: the process ends on its own).
    const script = [
      "import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'",
      'const runtime = createQuickJSRuntime({ poolSize: 2 })',
      "const result = await runtime.run({ code: 'const n: number = 20; return n + 1', bindings: [], call: async () => null })",
      'console.log(JSON.stringify(result.value ?? result.error))',
    ].join('\n')
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: project,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, NODE_OPTIONS: '' },
    })
    expect([child.status, child.signal, child.stdout.trim(), child.stderr]).toEqual([0, null, '21', ''])
  }, 90_000)

  test('the TypeScript stripper ships inside @ptc/sandbox (sucrase bundled, with the licenses of what it holds), not as a dependency', () => {
    const dist = join(project, 'node_modules', '@ptc', 'sandbox', 'dist')
    expect(existsSync(join(dist, 'stripper.cjs'))).toBe(true)
    const licenses = readFileSync(join(dist, 'stripper.cjs.LICENSES.txt'), 'utf8')
    expect(licenses).toMatch(/^sucrase@\d\S* \(MIT\)$/m)
    expect(licenses).toMatch(/^ts-interface-checker@\d\S* \(Apache-2\.0\)$/m)
    expect(existsSync(join(project, 'node_modules', 'sucrase'))).toBe(false)
  })

  test('long programs are prepared on a worker thread from the installed packages (TypeScript, a session program)', async () => {
    // Past INLINE_STRIP_UNITS a program is stripped, and a session program parsed, by the `prepare-worker.js`
    // the sandbox package ships beside its chunks: a packing or bundling mistake shows here only.
    const value = await scriptOutput('long-programs.mjs', [
      "import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'",
      "const runtime = createQuickJSRuntime({ isolation: 'inline' })",
      "const pad = '// ' + 'x'.repeat(40000) + '\\n'",
      'const run = (code) => runtime.run({ code: pad + code, bindings: [], call: async () => null, session: "s" })',
      "const first = await run('const n: number = 41')",
      "const second = await run('return (n as number) + 1')",
      'console.log(JSON.stringify([first.error ?? null, second.value ?? second.error]))',
      'await runtime.dispose()',
    ])
    expect(value).toEqual([null, 42])
  }, 60_000)

  describe('a tools module that imports @ptc/tools (no config)', () => {
    const plain = join(project, 'plain')
    beforeAll(() => {
      mkdirSync(plain)
      writeFileSync(
        join(plain, 'tools.ts'),
        [
          "import { defineTool } from '@ptc/tools'",
          '',
          'export const add = defineTool({',
          "  name: 'add',",
          "  description: 'Adds two integers.',",
          "  parameters: { a: { type: 'integer', required: true }, b: { type: 'integer', required: true } },",
          "  output: { schema: { type: 'integer' } },",
          '  isConcurrencySafe: () => true,',
          '  execute: async ({ a, b }) => a + b,',
          '})',
          '',
        ].join('\n'),
      )
      writeFileSync(
        join(plain, 'sum.ts'),
        '// @description Sum 1..5 in pairs\nlet total: number = 0\nfor (let i = 1; i <= 5; i++) total = await tools.add({ a: total, b: i })\nconsole.log(`total ${total}`)\nreturn total\n',
      )
      writeFileSync(join(plain, 'wrong.ts'), 'const n: string = await tools.add({ a: 1 })\nreturn n\n')
    })

    test('ptc run with a session log, then ptc log shows every sub-call', async () => {
      const result = await ptc(['run', 'sum.ts', '--tools', 'tools.ts', '--session', 'run.jsonl'], plain)
      expectOk(result, 'ptc run sum.ts')
      expect(result.stdout).toBe('total 15\n15\n')
      const log = await ptc(['log', 'run.jsonl'], plain)
      expectOk(log, 'ptc log run.jsonl')
      expect(log.stdout).toContain('Sum 1..5 in pairs')
      expect(log.stdout.match(/\badd\b/g)?.length).toBeGreaterThanOrEqual(5)
      const json = JSON.parse((await ptc(['log', 'run.jsonl', '--json'], plain)).stdout) as unknown
      expect(JSON.stringify(json)).toContain(':ptc:5')
    }, 60_000)

    test('ptc run --session-state keeps a sandbox session across processes, from the installed packages', async () => {
      writeFileSync(
        join(plain, 'count.ts'),
        'globalThis.count = (globalThis.count ?? 0) + 1\nconst sum: number = await tools.add({ a: count, b: 100 })\nreturn sum\n',
      )
      for (const expected of ['101', '102']) {
        const result = await ptc(['run', 'count.ts', '--tools', 'tools.ts', '--session-state', 'consumer'], plain)
        expectOk(result, 'ptc run --session-state')
        expect(result.stdout.trim()).toBe(expected)
      }
      expect(existsSync(join(plain, '.ptc/sessions/secret'))).toBe(true)
    }, 60_000)

    test('ptc run --approve defer suspends a program that ptc resume continues in another process, from the installed packages', async () => {
      // The built-in demo shop: its refunds ask for approval.
      writeFileSync(
        join(plain, 'refund.ts'),
        "const r = await tools.issue_refund({ orderId: 'O-1028', amountCents: 100, reason: 'scratched' })\nreturn r.amountCents\n",
      )
      const waiting = await ptc(['run', 'refund.ts', '--approve', 'defer'], plain)
      expect(waiting.code, `ptc run --approve defer exited ${String(waiting.code)}\nstderr:\n${waiting.stderr}`).toBe(3)
      const token = /go on with: ptc resume (\S+) --decision/.exec(waiting.stderr)?.[1]
      expect(token).toMatch(/^ptc-run-/)
      const resumed = await ptc(['resume', token as string, '--decision', 'allow'], plain)
      expectOk(resumed, 'ptc resume')
      expect(resumed.stdout.trim()).toBe('100')
    }, 60_000)

    test('durable approval: a program suspended by one process is resumed by another, from the installed packages', async () => {
      writeFileSync(
        join(project, 'approve.mjs'),
        [
          "import { createPtcExecutor } from '@ptc/ptc'",
          "import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'",
          "import { createFileSessionStore } from '@ptc/sandbox/session'",
          "import { defineTool, ToolsService } from '@ptc/tools'",
          'const [mode, token] = process.argv.slice(2)',
          "const runtime = createQuickJSRuntime({ secret: 'consumer-secret-0123456789abcdef' })",
          "const tools = new ToolsService({ approval: { request: async () => 'deferred' } })",
          "tools.register(defineTool({ name: 'refund', description: 'Refund.', parameters: { order: { type: 'string', required: true } }, output: { schema: { type: 'object', properties: { refunded: { type: 'string' } }, additionalProperties: false } }, execute: async ({ order }) => ({ refunded: order }) }))",
          "tools.on('tools/pre-execute', (exec, next) => (exec.name === 'refund' ? { kind: 'ask', reason: 'money' } : next()))",
          "tools.setExecutor(createPtcExecutor({ runtime, durable: { store: createFileSessionStore({ directory: '.ptc/approvals' }) } }))",
          "const agent = { id: 'consumer' }",
          'const signal = AbortSignal.timeout(60_000)',
          'const code = \'const before = 41; const r = await tools.refund({ order: "A-1" }); return [before + 1, r.refunded]\'',
          "const batch = mode === 'start'",
          "  ? await tools.execute({ calls: [{ type: 'tool_call', id: 'c1', name: 'run_code', arguments: JSON.stringify({ code, description: 'refund' }) }], signal, agent })",
          "  : await tools.resume({ token, decision: 'allowed-once', agent, signal })",
          'console.log(JSON.stringify(batch.results[0].result.value))',
          'await runtime.dispose()',
        ].join('\n'),
      )
      const first = await run(process.execPath, ['approve.mjs', 'start'], project)
      expectOk(first, 'node approve.mjs start')
      const awaiting = (JSON.parse(first.stdout.trim()) as { awaiting: { token: string; calls: unknown[] } }).awaiting
      expect(awaiting.calls).toEqual([{ tool: 'refund', arguments: { order: 'A-1' }, reason: 'money' }])
      const second = await run(process.execPath, ['approve.mjs', 'resume', awaiting.token], project)
      expectOk(second, 'node approve.mjs resume')
      expect(JSON.parse(second.stdout.trim())).toEqual({ logs: [], result: [42, 'A-1'] })
    }, 60_000)

    test('ptc check finds the program that breaks the declarations, and passes the one that keeps them', async () => {
      expectOk(await ptc(['check', 'sum.ts', '--tools', 'tools.ts'], plain), 'ptc check sum.ts')
      const wrong = await ptc(['check', 'wrong.ts', '--tools', 'tools.ts'], plain)
      expect(wrong.code).toBe(1)
      expect(wrong.stdout + wrong.stderr).toMatch(/wrong\.ts:1:\d+/)
    }, 60_000)

    test('ptc sdk prints the declarations of the module’s tools', async () => {
      const sdk = await ptc(['sdk', '--tools', 'tools.ts'], plain)
      expectOk(sdk, 'ptc sdk')
      expect(sdk.stdout).toContain('declare const tools')
      expect(sdk.stdout).toMatch(/interface ToolArgsMap \{\n {2}add: \{\n[^}]*a: number\n[^}]*b: number\n/)
      expect(sdk.stdout).toContain('add(args: ToolArgsMap["add"]): Promise<ToolOutputMap["add"]>')
    }, 60_000)
  })

  test('ptc serve --help shows its usage; --version is the packed version', async () => {
    const help = await ptc(['serve', '--help'])
    expectOk(help, 'ptc serve --help')
    expect(help.stdout).toContain('ptc serve')
    expect(help.stdout).toContain('--http')
    const version = await ptc(['--version'])
    expect(version.stdout.trim()).toContain(packed.find((p) => p.name === '@ptc/cli')?.version ?? 'none')
  }, 60_000)

  test('without the isolated-vm native build, --sandbox isolated-vm is exit 2 and says what to install', async () => {
    const result = await ptc(['run', 'program.ts', '--sandbox', 'isolated-vm'])
    // From Node 24 the install brings isolated-vm 7, whose prebuilt binary needs no install script: it runs.
    if (Number.parseInt(process.versions.node, 10) >= 24) {
      expectOk(result, 'ptc run --sandbox isolated-vm')
      expect(result.stderr).toMatch(/sub-calls \(isolated-vm, run \d+ ms\)/)
      return
    }
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toMatch(/^ptc: the isolated-vm sandbox cannot start: /m)
    // npm ran with --ignore-scripts, as npm 12 does for a dependency the project did not allow: the package is
    // there, its native part is not, and the message says how to allow and build it.
    expect(result.stderr).toContain(
      'the optional dependency "isolated-vm" is installed but its native part was never built',
    )
    expect(result.stderr).toContain('`npm install-scripts approve isolated-vm`')
    expect(result.stderr).toContain('`npm rebuild isolated-vm`')
  }, 60_000)
})

describe('a project that installs the tarballs with pnpm', () => {
  // pnpm's layout lets a package resolve only its own dependencies (npm hoists them all to the top): a file
  // that finds a module relative to where it was bundled, or a package that uses another's dependency,
  // works in the project above and fails here.
  const strict = join(work, 'strict')

  beforeAll(async () => {
    mkdirSync(strict)
    // Each @ptc package from its tarball, also where another @ptc package depends on it (`overrides`).
    const tarballs = Object.fromEntries(packed.map((p) => [p.name, `file:${p.tarball}`]))
    writeFileSync(
      join(strict, 'package.json'),
      JSON.stringify(
        { name: 'strict', private: true, type: 'module', dependencies: tarballs, pnpm: { overrides: tarballs } },
        null,
        2,
      ),
    )
    // pnpm's default layout, whatever a user-level .npmrc says.
    writeFileSync(join(strict, '.npmrc'), 'node-linker=isolated\nshamefully-hoist=false\npublic-hoist-pattern=\n')
    const [command, ...prefix] = pnpmCommand(ROOT)
    const install = await run(
      command as string,
      [...prefix, 'install', '--ignore-scripts', '--prefer-offline', '--reporter=append-only'],
      strict,
    )
    expectOk(install, 'pnpm install')
    // The layout this block is about: the sandbox's own dependencies are not visible from the project.
    expect(existsSync(join(strict, 'node_modules', 'acorn'))).toBe(false)
    expect(existsSync(join(strict, 'node_modules', 'quickjs-emscripten-core'))).toBe(false)
  }, 600_000)

  test('QuickJS in worker threads and inline: a sub-call, a long TypeScript program, a session of short and long programs', async () => {
    const lines = [
      "import { createQuickJSRuntime } from '@ptc/sandbox-quickjs'",
      'const out = {}',
      "for (const isolation of ['worker', 'inline']) {",
      '  const runtime = createQuickJSRuntime({ isolation, poolSize: 1 })',
      '  const call = async (_name, args) => ({ doubled: args.n * 2 })',
      '  const run = (code, session) => runtime.run({ code, bindings: ["dbl"], call, ...(session && { session }) })',
      "  const pad = '// ' + 'x'.repeat(20000) + '\\n'",
      '  const results = [',
      "    await run('const x: number = 20\\nreturn (await tools.dbl({ n: x })).doubled + 2'),",
      "    await run(pad + 'const y: number = 42\\nreturn y'),",
      "    await run('const kept: number = 40', 's'),",
      "    await run(pad + 'var more: number = 2', 's'),",
      "    await run('return kept + more', 's'),",
      '  ]',
      '  out[isolation] = results.map((r) => r.error ?? r.value ?? null)',
      '  await runtime.dispose()',
      '}',
      'console.log(JSON.stringify(out))',
    ]
    writeFileSync(join(strict, 'quickjs.mjs'), `${lines.join('\n')}\n`)
    const result = await run(process.execPath, ['quickjs.mjs'], strict)
    expectOk(result, 'node quickjs.mjs')
    const expected = [42, 42, null, null, 42]
    expect(JSON.parse(result.stdout)).toEqual({ worker: expected, inline: expected })
  }, 120_000)

  test('the installed ptc command runs a program', async () => {
    writeFileSync(join(strict, 'six.ts'), 'const six: number = 6\nreturn six * 7\n')
    const result = await run(join(strict, 'node_modules', '.bin', 'ptc'), ['run', 'six.ts'], strict)
    expectOk(result, 'ptc run six.ts')
    expect(result.stdout.trim()).toBe('42')
  }, 60_000)
})
