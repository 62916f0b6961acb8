/**
 * `ptc.config.ts` and `ptc init` as a user meets them: the built binary in a
 * child process, in temporary folders whose `node_modules` is a link to the
 * workspace's (so a config's `@ptc/cli` and `@ptc/tools` imports resolve to
 * the packages built here).
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { isolatedVmAvailability } from '@ptc/sandbox-isolated-vm'
import { connectStdioClient, type CallToolResult, type Client, type ElicitAnswer } from '@ptc/mcp/testing'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { BIN, buildCli, ROOT } from './build.js'
import { hasScript, noStack, ptc, ptcOnTerminal, reason, type CliRun } from './cli.js'

/** A temporary folder with these files (names may contain `/`) and `node_modules` linked to the workspace's. */
function project(files: Readonly<Record<string, string>> = {}): { dir: string; path: (name: string) => string } {
  const dir = mkdtempSync(join(base, 'p-'))
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true })
    writeFileSync(join(dir, name), text)
  }
  return { dir, path: (name) => join(dir, name) }
}

const base = mkdtempSync(join(tmpdir(), 'ptc-config-test-'))
afterAll(() => rmSync(base, { recursive: true, force: true }))
beforeAll(() => buildCli(), 120_000)

const fixture = (name: string): string => join(ROOT, 'test/cli/fixtures', name)
const json = (run: CliRun): Record<string, unknown> => JSON.parse(run.stdout) as Record<string, unknown>

/** Two tools and three policies; the approval service writes each amount it is asked about to asked.log. */
const CONFIG = `import { appendFileSync } from 'node:fs'
import { defineConfig } from '@ptc/cli'
import { defineTool } from '@ptc/tools'

const add = defineTool({
  name: 'add',
  description: 'Adds two integers.',
  parameters: { a: { type: 'integer', required: true }, b: { type: 'integer', required: true } },
  output: { schema: { type: 'integer' }, render: (_args, sum) => [{ type: 'text', text: String(sum) }] },
  isConcurrencySafe: () => true,
  execute: async ({ a, b }) => a + b,
})

const pay = defineTool({
  name: 'pay',
  description: 'Pays an amount of euros.',
  parameters: { amount: { type: 'integer', required: true } },
  output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
  execute: async ({ amount }) => \`paid \${amount}\`,
})

const amountOf = (args: unknown): number => {
  const amount = typeof args === 'object' && args !== null ? (args as { amount?: unknown }).amount : undefined
  return typeof amount === 'number' ? amount : 0
}

export default defineConfig({
  tools: [add, pay],
  setup(service) {
    service.on('tools/pre-execute', (exec, next) => (exec.name === 'shout' ? { kind: 'deny', reason: 'no shouting here' } : next()))
    service.on('tools/pre-execute', (exec, next) => (exec.name === 'pay' && amountOf(exec.arguments) > 100 ? { kind: 'deny', reason: 'over the limit of 100' } : next()))
    service.on('tools/pre-execute', (exec, next) => (exec.name === 'pay' ? { kind: 'ask', reason: \`pay \${amountOf(exec.arguments)}\` } : next()))
  },
  approval: {
    request: async ({ exec }) => {
      appendFileSync(new URL('./asked.log', import.meta.url), \`\${amountOf(exec.arguments)}\\n\`)
      return amountOf(exec.arguments) <= 10 ? 'allowed-once' : 'rejected'
    },
  },
})
`

/** The imports and the one tool of the JavaScript configs below. */
const HELLO = `import { defineConfig } from '@ptc/cli'
import { defineTool } from '@ptc/tools'

export const hello = defineTool({
  name: 'hello',
  description: 'Greets someone.',
  parameters: { name: { type: 'string', required: true } },
  output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
  execute: async ({ name }) => \`hello, \${name}\`,
})
`

/** A JavaScript config chosen with --config: one tool and a sub-call limit of 1. */
const CUSTOM = `${HELLO}
export default defineConfig({ tools: [hello], limits: { maxSubCalls: 1 } })
`

/** A config whose policy asks before every greeting and that has no approval service of its own. */
const ASKING = `${HELLO}
export default defineConfig({
  tools: [hello],
  setup(service) {
    service.on('tools/pre-execute', (exec, next) => (exec.name === 'hello' ? { kind: 'ask', reason: 'greetings need a yes' } : next()))
  },
})
`

const PAY = `const out = []
for (const amount of [5, 50, 500]) {
  try { out.push(await tools.pay({ amount })) } catch (e) { out.push(\`\${amount}: \${e.code}: \${e.message}\`) }
}
return out`

const MODULE = '{ "type": "module" }\n'

const shop = project({
  'package.json': MODULE,
  'ptc.config.ts': CONFIG,
  'custom.config.mjs': CUSTOM,
  'asking.config.mjs': ASKING,
  'pay.js': PAY,
  'add.js': 'return await tools.add({ a: 2, b: 3 })',
  'pay-once.js': 'return await tools.pay({ amount: 5 })',
  'both.js':
    'const sum = await tools.add({ a: 1, b: 2 })\nconst shouted = await tools.shout({ word: "hi" }).catch((e) => e.code)\nreturn { sum, shouted }',
  'hello-twice.js':
    'const first = await tools.hello({ name: "Ada" })\nconst second = await tools.hello({ name: "Alan" }).catch((e) => e.message)\nreturn { first, second }',
  'misuse.ts': 'const paid: number = await tools.pay({ amount: "ten" })\nreturn paid',
  'empty/.keep': '',
})
const asked = (): string[] =>
  existsSync(shop.path('asked.log')) ? readFileSync(shop.path('asked.log'), 'utf8').trim().split('\n') : []
const clearAsked = (): void => rmSync(shop.path('asked.log'), { force: true })

describe('ptc.config.ts in the working directory', () => {
  test('is found: its tools run, and the header line names it', async () => {
    const run = await ptc(['run', 'add.js'], { cwd: shop.dir })
    expect(run.code).toBe(0)
    expect(run.stdout).toBe('5\n')
    expect(run.stderr.split('\n')[0]).toMatch(
      /^ptc: run_code "ptc run add\.js" on quickjs, tools: ptc\.config\.ts, config: ptc\.config\.ts; the model receives:$/,
    )
  })

  test('ptc sdk and ptc check use its tools', async () => {
    const sdk = await ptc(['sdk'], { cwd: shop.dir })
    expect(sdk.code).toBe(0)
    expect(sdk.stdout).toContain('pay(args: ToolArgsMap["pay"]): Promise<ToolOutputMap["pay"]>')
    expect(sdk.stdout).toContain('add(args: ToolArgsMap["add"])')
    expect(sdk.stdout).not.toContain('get_order')
    const check = await ptc(['check', 'misuse.ts'], { cwd: shop.dir })
    expect(check.code).toBe(1)
    expect(check.stdout).toMatch(
      /^misuse\.ts:1:\d+ - error TS2322: Type 'string' is not assignable to type 'number'\./m,
    )
  })

  test('a policy of the config denies a sub-call (the program sees DENIED) and its approval service answers the asks', async () => {
    clearAsked()
    const run = await ptc(['run', 'pay.js', '--json'], { cwd: shop.dir })
    expect(run.code).toBe(0)
    expect(json(run).value).toEqual([
      'paid 5',
      '50: DENIED: the approval service of ptc.config.ts rejected this call (pay 50)',
      '500: DENIED: over the limit of 100',
    ])
    // Asked about 5 and 50 (the policy denied 500 before anyone was asked); its answers decided.
    expect(asked()).toEqual(['5', '50'])
    expect(run.stderr).toMatch(/^ptc: approved pay \(call_[0-9a-f]{8}:ptc:1\): pay 5 \(by ptc\.config\.ts\)$/m)
    expect(run.stderr).toMatch(/^ptc: rejected pay \(call_[0-9a-f]{8}:ptc:2\): pay 50 \(by ptc\.config\.ts\)$/m)
  })

  test('--approve yes or no answers instead of the config’s approval service', async () => {
    clearAsked()
    const yes = await ptc(['run', 'pay.js', '--json', '--approve', 'yes'], { cwd: shop.dir })
    expect(json(yes).value).toEqual(['paid 5', 'paid 50', '500: DENIED: over the limit of 100'])
    const no = await ptc(['run', 'pay.js', '--json', '--approve', 'no'], { cwd: shop.dir })
    expect(json(no).value).toEqual([
      '5: DENIED: --approve no rejected this call (pay 5)',
      '50: DENIED: --approve no rejected this call (pay 50)',
      '500: DENIED: over the limit of 100',
    ])
    expect(asked()).toEqual([])
  })

  test('--tools replaces the config’s tools; its setup still applies', async () => {
    const run = await ptc(['run', 'both.js', '--tools', fixture('tools.mjs')], { cwd: shop.dir })
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({ sum: 3, shouted: 'DENIED' })
    expect(run.stderr.split('\n')[0]).toContain(`tools: ${fixture('tools.mjs')}, config: ptc.config.ts;`)
    const sdk = await ptc(['sdk', '--tools', fixture('tools.mjs')], { cwd: shop.dir })
    expect(sdk.stdout).toContain('shout(args')
    expect(sdk.stdout).not.toContain('pay(args')
  })

  test('--config FILE is read instead of the working directory’s config, with its limits', async () => {
    const run = await ptc(['run', 'hello-twice.js', '--config', 'custom.config.mjs'], { cwd: shop.dir })
    expect(run.code).toBe(1) // the second call is over the config's maxSubCalls of 1
    expect(run.stderr.split('\n')[0]).toContain('tools: custom.config.mjs, config: custom.config.mjs;')
    expect(run.stderr).toMatch(/^ptc: the program failed \(limit\): sub-call limit of 1 calls exceeded/m)
    // The last line names the setting, the file it came from and the flag.
    expect(reason(run)).toBe(
      'ptc: the run stopped at its sub-call limit of 1 calls, set by limits.maxSubCalls in custom.config.mjs: raise it there or with --max-sub-calls N (a flag wins over the config)',
    )
    const elsewhere = await ptc(['sdk', '--config', shop.path('custom.config.mjs')], { cwd: shop.path('empty') })
    expect(elsewhere.stdout).toContain('hello(args: ToolArgsMap["hello"])')
  })

  test.runIf(process.platform === 'linux' && hasScript())(
    'on a terminal the config’s approval service answers; without one, ptc run prompts',
    async () => {
      clearAsked()
      const configured = await ptcOnTerminal(['run', shop.path('pay.js'), '--config', shop.path('ptc.config.ts')], '')
      // The terminal's screen (stdout and stderr) says why, should it fail: it once exited 2 beside a second suite.
      expect(configured.code, configured.stdout).toBe(0)
      expect(configured.stdout).not.toContain('[y/N]')
      expect(asked()).toEqual(['5', '50'])
      const withoutApproval = CONFIG.replace(/ {2}approval: \{[\s\S]*?\n {2}\},\n/, '').replace(
        "import { appendFileSync } from 'node:fs'\n",
        '',
      )
      expect(withoutApproval).not.toContain('approval')
      const bare = project({ 'package.json': MODULE, 'ptc.config.ts': withoutApproval })
      const prompted = await ptcOnTerminal(
        ['run', shop.path('pay-once.js'), '--config', bare.path('ptc.config.ts')],
        'y\n',
      )
      expect(prompted.code, prompted.stdout).toBe(0)
      expect(prompted.stdout).toMatch(/approve pay \(call_[0-9a-f]{8}:ptc:1\): pay 5\? \[y\/N\]/)
      expect(prompted.stdout).toContain('paid 5')
    },
  )
})

describe('flags win over the config’s limits and sandbox', () => {
  const limited = project({
    'ptc.config.mjs': "export default { limits: { memoryBytes: 2 * 1024 * 1024 }, sandbox: 'isolated-vm' }",
    'big.js': "return 'x'.repeat(8 * 1024 * 1024).length",
  })

  test('--sandbox quickjs over the config’s isolated-vm, under the config’s memory limit; --memory over that', async () => {
    const small = await ptc(['run', 'big.js', '--json', '--sandbox', 'quickjs'], { cwd: limited.dir })
    expect(small.code).toBe(1)
    expect(json(small)).toMatchObject({ ok: false, sandbox: 'quickjs', error: { kind: 'memory' } })
    const large = await ptc(['run', 'big.js', '--json', '--sandbox', 'quickjs', '--memory', '64'], { cwd: limited.dir })
    expect(large.code).toBe(0)
    expect(json(large)).toMatchObject({ ok: true, sandbox: 'quickjs', value: 8 * 1024 * 1024 })
  })

  test.runIf(isolatedVmAvailability().available)(
    'the config’s sandbox applies without --sandbox (the binary restarts node for isolated-vm)',
    async () => {
      const run = await ptc(['run', 'big.js', '--json', '--memory', '64'], { cwd: limited.dir })
      expect(run.code).toBe(0)
      expect(json(run)).toMatchObject({ ok: true, sandbox: 'isolated-vm', value: 8 * 1024 * 1024 })
    },
  )
})

describe('a bad config is one line on stderr and exit 2', () => {
  const bad = project({
    'unknown-key.mjs': 'export default { tool: [] }',
    'tools-type.mjs': "export default { tools: 'add' }",
    'not-a-tool.mjs': "export default { tools: [{ name: 'x' }] }",
    'sandbox.mjs': "export default { sandbox: 'v8' }",
    'limit.mjs': 'export default { limits: { wallMS: 5 } }',
    'limit-value.mjs': "export default { limits: { cpuMs: '5s' } }",
    'approval.mjs': "export default { approval: () => 'allowed-once' }",
    'setup-throws.mjs': "export default { setup() { throw new Error('no database\\n    at connect (db.js:1:1)') } }",
    'setup-rejects.mjs': "export default { async setup() { await null; throw new TypeError('not today') } }",
    'no-default.mjs': 'export const tools = []',
    'not-an-object.mjs': 'export default [1, 2]',
    'throws.mjs': "throw new Error('cannot import this')",
    'syntax.ts': 'const = 1\nexport default {}',
    'commonjs.ts': "import { defineConfig } from '@ptc/cli'\nexport default defineConfig({})",
    'folder.mjs/.keep': '',
    'notes.txt': 'not a module',
    'two/ptc.config.ts': 'export default {}',
    'two/ptc.config.js': 'export default {}',
    'prog.js': 'return 1',
  })
  const cases: [string, string[], RegExp][] = [
    [
      'an unknown key, with the closest valid one',
      ['run', 'prog.js', '--config', 'unknown-key.mjs'],
      /^ptc: config file unknown-key\.mjs: unknown key "tool" \(did you mean "tools"\?\)$/,
    ],
    [
      'tools that are not an array',
      ['run', 'prog.js', '--config', 'tools-type.mjs'],
      /^ptc: config file tools-type\.mjs: tools must be an array of tools made with defineTool, not a string$/,
    ],
    [
      'a tool that is not one',
      ['sdk', '--config', 'not-a-tool.mjs'],
      /^ptc: config file not-a-tool\.mjs: tools\[0\] is not a tool \(no description\); make tools with defineTool$/,
    ],
    [
      'an unknown sandbox',
      ['run', 'prog.js', '--config', 'sandbox.mjs'],
      /^ptc: config file sandbox\.mjs: sandbox must be one of "quickjs", "isolated-vm", not "v8"$/,
    ],
    [
      'an unknown limit',
      ['run', 'prog.js', '--config', 'limit.mjs'],
      /^ptc: config file limit\.mjs: limits\.wallMS is not a limit \(did you mean "wallMs"\?\)$/,
    ],
    [
      'a limit that is not a number',
      ['check', 'prog.js', '--config', 'limit-value.mjs'],
      /^ptc: config file limit-value\.mjs: limits\.cpuMs must be a non-negative number, not a string$/,
    ],
    [
      'an approval that is not a service',
      ['run', 'prog.js', '--config', 'approval.mjs'],
      /^ptc: config file approval\.mjs: approval must be an approval service .*not a function$/,
    ],
    [
      'a setup that throws',
      ['run', 'prog.js', '--config', 'setup-throws.mjs'],
      /^ptc: config file setup-throws\.mjs: setup failed: no database \((thrown at [^;]+; )?set PTC_DEBUG=1 for its stack\)$/,
    ],
    [
      'a setup that rejects',
      ['sdk', '--config', 'setup-rejects.mjs'],
      /^ptc: config file setup-rejects\.mjs: setup failed: not today \((thrown at [^;]+; )?set PTC_DEBUG=1 for its stack\)$/,
    ],
    [
      'no default export',
      ['run', 'prog.js', '--config', 'no-default.mjs'],
      /^ptc: config file no-default\.mjs has no default export; write export default defineConfig\(\{ … \}\)$/,
    ],
    [
      'a default export that is not an object',
      ['run', 'prog.js', '--config', 'not-an-object.mjs'],
      /^ptc: config file not-an-object\.mjs: the default export is an array, not a config object/,
    ],
    [
      'a config that throws on import',
      ['run', 'prog.js', '--config', 'throws.mjs'],
      /^ptc: config file throws\.mjs failed to load: cannot import this \((thrown at [^;]+; )?set PTC_DEBUG=1 for its stack\)$/,
    ],
    [
      'a TypeScript syntax error',
      ['run', 'prog.js', '--config', 'syntax.ts'],
      /^ptc: config file syntax\.ts failed to load: Transform failed with 1 error: .*syntax\.ts:1:6: ERROR: Expected identifier/,
    ],
    [
      'a .ts config loaded as CommonJS (no "type": "module")',
      ['run', 'prog.js', '--config', 'commonjs.ts'],
      /^ptc: config file commonjs\.ts failed to load: .*\(it was loaded as CommonJS: add "type": "module" to the package\.json, or name it ptc\.config\.mts\)( \((thrown at [^;]+; )?set PTC_DEBUG=1 for its stack\))?$/,
    ],
    [
      'a config file that does not exist',
      ['run', 'prog.js', '--config', 'nope.ts'],
      /^ptc: config file nope\.ts not found$/,
    ],
    [
      'a folder',
      ['run', 'prog.js', '--config', 'folder.mjs'],
      /^ptc: config file folder\.mjs is a directory, not a regular file$/,
    ],
    [
      'a file that is not a module',
      ['run', 'prog.js', '--config', 'notes.txt'],
      /^ptc: config file notes\.txt is not a JavaScript or TypeScript module/,
    ],
    [
      'ptc serve with a bad config',
      ['serve', '--config', 'unknown-key.mjs'],
      /^ptc: config file unknown-key\.mjs: unknown key "tool"/,
    ],
  ]
  test.each(cases)('%s', async (_label, args, expected) => {
    const run = await ptc(args, { cwd: bad.dir })
    expect(run.code).toBe(2)
    expect(run.stdout).toBe('')
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(run.stderr.trimEnd()).toMatch(expected)
    expect(noStack(run.stderr)).toBe(true)
  })

  test('two config files in one folder: an error naming both', async () => {
    for (const args of [['run', '../prog.js'], ['sdk'], ['serve']]) {
      const run = await ptc(args, { cwd: bad.path('two') })
      expect(run.code).toBe(2)
      expect(run.stderr).toBe(
        `ptc: 2 config files in ${bad.path('two')}: ptc.config.ts and ptc.config.js; keep one, or choose one with --config FILE\n`,
      )
    }
    // --config chooses one.
    expect((await ptc(['run', '../prog.js', '--config', 'ptc.config.js'], { cwd: bad.path('two') })).code).toBe(0)
  })
})

describe('ptc init', () => {
  const cli = JSON.parse(readFileSync(join(ROOT, 'packages/cli/package.json'), 'utf8')) as {
    version: string
    dependencies: Record<string, string>
  }
  const tools = JSON.parse(readFileSync(join(ROOT, 'packages/tools/package.json'), 'utf8')) as { version: string }
  const STARTER = ['.gitignore', 'README.md', 'package.json', 'program.ts', 'ptc.config.ts', 'tsconfig.json']

  test('writes the starter into a new folder and prints the next steps', async () => {
    const root = mkdtempSync(join(base, 'init-'))
    const run = await ptc(['init', 'my-agent'], { cwd: root })
    expect(run.code).toBe(0)
    expect(readdirSync(join(root, 'my-agent')).sort()).toEqual(STARTER)
    expect(run.stdout).toContain(
      'ptc: wrote a starter project to my-agent: package.json, ptc.config.ts, program.ts, tsconfig.json, .gitignore, README.md\n',
    )
    expect(run.stdout).toMatch(
      /Next steps:\n {2}cd my-agent\n {2}npm install \S+\/\*\.tgz\n {2}npx ptc run program\.ts\n/,
    )
    const manifest = JSON.parse(readFileSync(join(root, 'my-agent/package.json'), 'utf8')) as Record<string, unknown>
    expect(manifest).toMatchObject({
      name: 'my-agent',
      type: 'module',
      scripts: { start: 'ptc run program.ts' },
      dependencies: {
        '@ptc/cli': `^${cli.version}`,
        '@ptc/tools': `^${tools.version}`,
        tsx: cli.dependencies['tsx'],
        typescript: cli.dependencies['typescript'],
      },
      // npm 12 builds the optional native backend only for an allowed dependency.
      allowScripts: { 'isolated-vm': true },
    })
    expect(readFileSync(join(root, 'my-agent/ptc.config.ts'), 'utf8')).toContain(
      "import { defineConfig } from '@ptc/cli'",
    )
  })

  test('writes into an empty working directory by default', async () => {
    const empty = mkdtempSync(join(base, 'init-'))
    const run = await ptc(['init'], { cwd: empty })
    expect(run.code).toBe(0)
    expect(readdirSync(empty).sort()).toEqual(STARTER)
    expect(run.stdout).not.toContain('cd ')
  })

  test('refuses a folder that is not empty, or a file, and writes nothing', async () => {
    const used = project({ 'notes.txt': 'mine' })
    rmSync(used.path('node_modules'))
    const run = await ptc(['init'], { cwd: used.dir })
    expect(run.code, run.stderr).toBe(2)
    expect(run.stderr).toBe(
      'ptc: the working directory is not empty ("notes.txt"); ptc init writes into an empty folder or a new one, and wrote nothing\n',
    )
    expect(readdirSync(used.dir)).toEqual(['notes.txt'])
    const file = await ptc(['init', 'notes.txt'], { cwd: used.dir })
    // Once, on a loaded machine, this exited 1: the message shows what it said then.
    expect(file.code, `stdout: ${file.stdout}\nstderr: ${file.stderr}`).toBe(2)
    expect(reason(file)).toBe('ptc: notes.txt is a file, not a folder; ptc init writes into an empty folder')
    expect(readFileSync(used.path('notes.txt'), 'utf8')).toBe('mine')
  })

  test('--help shows its usage', async () => {
    const run = await ptc(['init', '--help'])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^ptc init \[DIR\]\n {2}Writes a starter project/)
    expect((await ptc(['help'])).stdout).toContain('ptc init [DIR]')
  })

  test('the starter runs: an order approved in code, one rejected by the approval service, one denied by the policy', async () => {
    const root = mkdtempSync(join(base, 'init-'))
    const init = await ptc(['init', 'app'], { cwd: root })
    // Its stderr says why, should it fail: it exited 1 once beside a second suite.
    expect(init.code, init.stderr).toBe(0)
    const app = join(root, 'app')
    symlinkSync(join(ROOT, 'node_modules'), join(app, 'node_modules'), 'dir')
    const run = await ptc(['run', 'program.ts'], { cwd: app })
    expect(run.code).toBe(0)
    expect(run.stdout).toBe(
      [
        'apple: ordered 17 units (PO-1001)',
        'pear: not ordered: the approval service of ptc.config.ts rejected this call (order 80 x pear)',
        'plum: not ordered: 598 units exceed the purchasing limit of 500',
        '',
      ].join('\n'),
    )
    expect(run.stderr.split('\n')[0]).toBe(
      'ptc: run_code "Restock every product that runs low" on quickjs, tools: ptc.config.ts, config: ptc.config.ts; the model receives:',
    )
    expect(run.stderr).toMatch(
      /^ptc: rejected order_stock \(call_[0-9a-f]{8}:ptc:\d\): order 80 x pear \(by ptc\.config\.ts\)$/m,
    )
    const check = await ptc(['check', 'program.ts'], { cwd: app })
    expect(check).toMatchObject({ code: 0, stdout: 'program.ts: no type errors\n' })
  }, 90_000) // three CLI processes one after another (a TypeScript config, a type check): over 20 s on a loaded machine
})

describe('ptc serve with a config', () => {
  const upstream = `fx=node --conditions=@ptc/source --import tsx ${join(ROOT, 'packages/mcp/src/testing/fixture-server.ts')}`
  const clients: Client[] = []
  afterAll(async () => {
    for (const client of clients) await client.close()
  })
  const connect = async (args: string[], elicit?: (message: string) => ElicitAnswer): Promise<Client> => {
    const { client } = await connectStdioClient(process.execPath, [BIN, 'serve', ...args], {
      cwd: shop.dir,
      ...(elicit !== undefined && { elicit }),
    })
    clients.push(client)
    return client
  }
  const runCode = async (client: Client, code: string): Promise<string> => {
    const result = (await client.callTool({ name: 'run_code', arguments: { code, description: 'test' } }, undefined, {
      timeout: 30_000,
    })) as CallToolResult
    return result.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n')
  }

  test('run_code’s SDK declares the config’s tools next to the upstream’s; a program calls both under the config’s policies', async () => {
    clearAsked()
    const client = await connect(['--upstream', upstream])
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(['run_code'])
    expect(tools[0]?.description).toContain('add(args: ToolArgsMap["add"])')
    expect(tools[0]?.description).toContain('pay(args: ToolArgsMap["pay"])')
    expect(tools[0]?.description).toContain('"fx.echo"')
    const text = await runCode(
      client,
      `const sum = await tools.add({ a: 2, b: 3 })
      const echoed = await tools["fx.echo"]({ text: "hi" })
      const paid = await tools.pay({ amount: 5 })
      const refused = await tools.pay({ amount: 500 }).catch((e) => e.code)
      return { sum, echoed, paid, refused }`,
    )
    expect(JSON.parse(text)).toEqual({ sum: 5, echoed: 'hi', paid: 'paid 5', refused: 'DENIED' })
    expect(asked()).toEqual(['5'])
  }, 60_000)

  test('without an approval service in the config, an ask goes to the MCP client through elicitation', async () => {
    const asks: string[] = []
    const program = 'try { return await tools.hello({ name: "Ada" }) } catch (e) { return e.code }'
    const yes = await connect(
      ['--config', 'asking.config.mjs'],
      (message) => (asks.push(message), { action: 'accept', content: { allow: true } }),
    )
    expect(await runCode(yes, program)).toBe('hello, Ada')
    expect(asks).toEqual([expect.stringMatching(/^Allow the call of hello \(mcp-\d+:ptc:1\): greetings need a yes\?$/)])
    const no = await connect(['--config', 'asking.config.mjs'], () => ({ action: 'decline' }))
    expect(await runCode(no, program)).toBe('DENIED')
    const cannot = await connect(['--config', 'asking.config.mjs'])
    expect(await runCode(cannot, program)).toBe('DENIED')
  }, 60_000)

  test('--config without --upstream serves the config’s tools alone', async () => {
    const client = await connect(['--config', 'custom.config.mjs'])
    const { tools } = await client.listTools()
    expect(tools[0]?.description).toContain('hello(args: ToolArgsMap["hello"])')
    expect(tools[0]?.description).not.toContain('pay(args')
    expect(await runCode(client, 'return await tools.hello({ name: "Ada" })')).toBe('hello, Ada')
  }, 60_000)
})
