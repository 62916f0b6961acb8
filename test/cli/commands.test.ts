/** `ptc sdk`, `check`, `log`, `bench`, `serve` and `help`, run as the built binary in a child process. */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { connectStdioClient, type CallToolResult } from '@ptc/mcp/testing'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { BIN, buildCli, ROOT } from './build.js'
import { noStack, ptc, tempDir } from './cli.js'

const program = (name: string): string => join(ROOT, 'examples/shop/programs', `${name}.ts`)
const fixture = (name: string): string => join(ROOT, 'test/cli/fixtures', name)

const files = tempDir({
  'misuse.ts': 'const c = await tools.get_customer({ id: 1 })\nreturn c.nickname',
  'misuse.js': 'const c = await tools.greet({ name: 7 })\nreturn c',
  'not-a-log.jsonl': 'this is not JSON\n{"also": "no type"}\n',
  'partial.jsonl':
    '{"type":"tool/call","time":1,"callId":"c1","name":"get_stock","arguments":"{\\"sku\\":\\"A\\"}"}\n{"type":"tool/result","time":4,"callId":"c1","name":"get_stock","isError":false,"content":[{"type":"text","text":"A: 3"}]}\n{"type":"tool/ca',
})
afterAll(() => files.cleanup())
beforeAll(() => buildCli(), 120_000)

describe('ptc sdk', () => {
  test('prints the guidance and the declarations of the demo tools', async () => {
    const run = await ptc(['sdk'])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^Call `run_code` with a short program/)
    expect(run.stdout).toContain('declare const tools: Tools')
    for (const name of ['search_customers', 'get_order', 'issue_refund', 'update_order_status'])
      expect(run.stdout).toContain(`  ${name}(args: ToolArgsMap["${name}"])`)
  })

  test('--tools prints the declarations of a module’s tools', async () => {
    const run = await ptc(['sdk', '--tools', fixture('tools.mjs')])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('add(args: ToolArgsMap["add"]): Promise<ToolOutputMap["add"]>')
    expect(run.stdout).not.toContain('get_order')
  })
})

describe('ptc check', () => {
  test.each(['top-customers', 'low-stock', 'delayed-orders', 'refund-damaged'])(
    'the example program %s has no type errors',
    async (name) => {
      const run = await ptc(['check', program(name)])
      expect(run).toMatchObject({ code: 0, stdout: `${program(name)}: no type errors\n` })
    },
  )

  test('prints each error with its position in the program, exit 1', async () => {
    const run = await ptc(['check', 'misuse.ts'], { cwd: files.dir })
    expect(run.code).toBe(1)
    expect(run.stdout.split('\n')).toEqual([
      "misuse.ts:1:38 - error TS2322: Type 'number' is not assignable to type 'string'.",
      expect.stringMatching(/^misuse\.ts:2:10 - error TS2339: Property 'nickname' does not exist on type/),
      '',
    ])
    expect(run.stderr).toBe('ptc: 2 type errors in misuse.ts\n')
  })

  test('checks JavaScript against a module’s tools', async () => {
    const run = await ptc(['check', files.path('misuse.js'), '--tools', fixture('tools.ts')])
    expect(run.code).toBe(1)
    expect(run.stdout).toMatch(/misuse\.js:1:31 - error TS2322: Type 'number' is not assignable to type 'string'\./)
  })

  test('a missing file is exit 2', async () => {
    const run = await ptc(['check', files.path('absent.ts')])
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(/^ptc: cannot read program .*absent\.ts: no such file\n$/)
  })
})

describe('ptc log', () => {
  test('a file that is not JSON Lines is exit 2 with the first bad line', async () => {
    const run = await ptc(['log', files.path('not-a-log.jsonl')])
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(/^ptc: .*not-a-log\.jsonl is not a JSON Lines session log \(line 1: not JSON: .*\)\n$/)
    expect(noStack(run.stderr)).toBe(true)
  })

  test('a missing file is exit 2', async () => {
    const run = await ptc(['log', files.path('absent.jsonl')])
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toMatch(/^ptc: cannot read session log .*absent\.jsonl: no such file\n$/)
  })

  test('a native call shows its arguments and result; a cut-off last line is reported and ignored', async () => {
    const run = await ptc(['log', files.path('partial.jsonl')])
    expect(run.code).toBe(0)
    expect(run.stdout).toBe('get_stock c1 {"sku":"A"} — 3 ms — ok (4 B): A: 3\n')
    expect(run.stderr).toMatch(/ignored an unterminated last line \(\d+ bytes/)
    const json = JSON.parse((await ptc(['log', files.path('partial.jsonl'), '--json'])).stdout) as unknown
    expect(json).toMatchObject({
      events: 2,
      partialTail: true,
      calls: [{ id: 'c1', name: 'get_stock', ms: 3, isError: false, summary: 'A: 3', subCalls: [] }],
    })
  })
})

describe('ptc bench', () => {
  test('outside a clone of the repository it is exit 2 with the reason', async () => {
    const dir = tempDir()
    try {
      const run = await ptc(['bench', '--quick'], { cwd: dir.dir })
      expect(run.code).toBe(2)
      expect(run.stderr).toMatch(
        /^ptc: bench runs the benchmark scripts of the ptc repository \(bench\/\).*inside a clone of the repository\n$/,
      )
    } finally {
      dir.cleanup()
    }
  })

  test('runs each script, tabulates the machine-readable results, writes results.json and chart.svg', async () => {
    // A stand-in repository whose scripts answer at once: one with results, one without, one failing.
    const repo = tempDir({ 'pnpm-workspace.yaml': 'packages: []\n' })
    try {
      symlinkSync(join(ROOT, 'node_modules'), repo.path('node_modules'))
      for (const folder of ['bench/pipeline', 'bench/ptc', 'bench/sandbox'])
        mkdirSync(repo.path(folder), { recursive: true })
      const json = {
        script: 'pipeline',
        title: 'fake',
        machine: 'test machine',
        quick: true,
        results: [
          {
            case: 'execute()',
            median: 50_000,
            unit: 'calls/s',
            better: 'higher',
            baseline: { case: 'direct', median: 1_000_000 },
          },
        ],
      }
      writeFileSync(repo.path('bench/run.ts'), '')
      writeFileSync(
        repo.path('bench/pipeline/pipeline.ts'),
        `console.log('| table |')\nif (process.argv.includes('--quick') && process.argv.includes('--json')) console.log('PTC_BENCH_JSON ' + ${JSON.stringify(JSON.stringify(json))})\n`,
      )
      writeFileSync(repo.path('bench/sandbox/quickjs.ts'), "console.log('human table only')\n")
      writeFileSync(
        repo.path('bench/ptc/ptc.ts'),
        "console.error('boom: ' + process.argv.slice(2).join(' '))\nprocess.exit(3)\n",
      )
      const run = await ptc(['bench', '--quick', '--backend', 'quickjs', '--out', 'out'], { cwd: repo.dir })
      expect(run.code).toBe(1)
      expect(run.stderr).toMatch(/\[1\/3\] bench\/pipeline\/pipeline\.ts done, 1 results in [\d.]+ s/)
      expect(run.stderr).toMatch(
        /\[2\/3\] bench\/ptc\/ptc\.ts failed \(exit 3\)[^\n]*\n {4}boom: --json --quick --backend quickjs/,
      )
      expect(run.stderr).toMatch(/\[3\/3\] bench\/sandbox\/quickjs\.ts done, no machine-readable results/)
      expect(run.stderr).toMatch(/results in out\/ \(results\.json, chart\.svg\)\n$/)
      expect(run.stdout).toContain('| pipeline | execute() | 50.0 k calls/s | direct (1.00 M calls/s) | 20.00x |')
      const results = JSON.parse(readFileSync(repo.path('out/results.json'), 'utf8')) as {
        machine: string
        scripts: { script: string; exitCode: number }[]
      }
      expect(results.machine).toBe('test machine')
      expect(results.scripts.map((s) => [s.script, s.exitCode])).toEqual([
        ['bench/pipeline/pipeline.ts', 0],
        ['bench/ptc/ptc.ts', 3],
        ['bench/sandbox/quickjs.ts', 0],
      ])
      const svg = readFileSync(repo.path('out/chart.svg'), 'utf8')
      expect(svg).toMatch(
        /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[\s\S]*pipeline · execute\(\)[\s\S]*20\.00x[\s\S]*<\/svg>\n$/,
      )
      expect(existsSync(repo.path('out/sandbox-quickjs-ts.txt'))).toBe(true)
    } finally {
      repo.cleanup()
    }
  })
})

describe('ptc bench --peers', () => {
  /** A stand-in repository whose bench/peers/peers.ts answers at once, and a fake `npm` first on the PATH. */
  function peersRepo(npmScript: string): { repo: ReturnType<typeof tempDir>; env: Record<string, string> } {
    const repo = tempDir({ 'pnpm-workspace.yaml': 'packages: []\n' })
    symlinkSync(join(ROOT, 'node_modules'), repo.path('node_modules'))
    mkdirSync(repo.path('bench/peers'), { recursive: true })
    mkdirSync(repo.path('bin'))
    writeFileSync(repo.path('bench/run.ts'), '')
    writeFileSync(repo.path('bench/peers/package-lock.json'), '{}\n')
    const json = {
      script: 'peers',
      title: 'fake peers',
      machine: 'test machine',
      quick: true,
      results: [
        { group: 'plain Node', case: 'sequential', median: 0.5, unit: 'µs/call', better: 'lower' },
        {
          group: 'ptc QuickJS inline, whole path',
          case: 'sequential',
          median: 20,
          unit: 'µs/call',
          better: 'lower',
          baseline: { case: 'plain Node', median: 0.5 },
          spread: { min: 19, max: 22.8, samples: [19, 20, 22.8] },
        },
        {
          group: 'peer A 1.2.3',
          case: 'sequential',
          median: 40,
          unit: 'µs/call',
          better: 'lower',
          baseline: { case: 'plain Node', median: 0.5 },
        },
      ],
      runtimes: [
        { group: 'plain Node', kind: 'baseline', method: 'no sandbox' },
        { group: 'ptc QuickJS inline, whole path', kind: 'ptc', method: 'run_code' },
        { group: 'peer A 1.2.3', kind: 'peer', method: 'its API' },
        { group: 'peer B 0.1.0', kind: 'peer', method: 'its API', error: "Cannot find package 'peer-b'" },
      ],
      notes: ['peer A: a caveat.'],
    }
    const script = `console.error('peers args: ' + process.argv.slice(2).join(' '))\nconsole.log('| own table |')\nconsole.log('PTC_BENCH_JSON ' + ${JSON.stringify(JSON.stringify(json))})\n`
    writeFileSync(repo.path('bench/peers/peers.ts'), script)
    writeFileSync(repo.path('bin/npm'), `#!/bin/sh\necho "$@" > ../npm-args\n${npmScript}\n`, { mode: 0o755 })
    return { repo, env: { PATH: `${repo.path('bin')}:${process.env.PATH ?? ''}` } }
  }

  test('installs the peers with npm ci when they are missing, runs bench/peers/peers.ts alone and prints its comparison table', async () => {
    const { repo, env } = peersRepo(
      "mkdir -p node_modules && echo '{}' > node_modules/.package-lock.json && echo 'added 341 packages'",
    )
    try {
      const run = await ptc(['bench', '--peers', '--quick', '--backend', 'quickjs', '--out', 'out'], {
        cwd: repo.dir,
        env,
      })
      expect(run.code).toBe(0)
      expect(run.stderr).toMatch(
        /^ptc: the peers are not installed: installing them into bench\/peers\/node_modules \(npm ci;.*\n/,
      )
      expect(readFileSync(repo.path('bench/npm-args'), 'utf8')).toBe('ci --no-audit --no-fund\n')
      expect(run.stderr).toMatch(/ptc: peers installed in [\d.]+ s\n/)
      expect(run.stderr).toMatch(/\[1\/1\] bench\/peers\/peers\.ts done, 3 results in [\d.]+ s/)
      expect(run.stdout.split('\n')).toEqual([
        'fake peers',
        '',
        '| runtime | sequential (µs/call) |',
        '|---|---|',
        '| plain Node | 0.50 |',
        '| ptc QuickJS inline, whole path | 20.0 (1.20x) |',
        '| peer A 1.2.3 | 40.0 |',
        "| peer B 0.1.0 | failed: Cannot find package 'peer-b' |",
        '',
        '| ptc against the best peer (time per call; below 1 = ptc faster) | sequential (best peer: peer A 1.2.3, 40.0 µs/call) | Promise.all |',
        '|---|---|---|',
        '| ptc QuickJS inline, whole path | 0.50x | — |',
        '',
        '- peer A: a caveat.',
        '',
      ])
      expect(readFileSync(repo.path('out/peers-peers-ts.txt'), 'utf8')).toContain(
        'peers args: --json --quick --backend quickjs',
      )
      const results = JSON.parse(readFileSync(repo.path('out/results.json'), 'utf8')) as {
        peers: boolean
        scripts: { script: string; runtimes: unknown[]; notes: string[] }[]
      }
      expect(results.peers).toBe(true)
      expect(results.scripts.map((s) => [s.script, s.runtimes.length, s.notes])).toEqual([
        ['bench/peers/peers.ts', 4, ['peer A: a caveat.']],
      ])
      expect(readFileSync(repo.path('out/chart.svg'), 'utf8')).toMatch(
        /ptc bench --peers --quick[\s\S]*peer A 1\.2\.3: sequential[\s\S]*80\.00x/,
      )

      const again = await ptc(['bench', '--peers', '--quick', '--out', 'out2'], { cwd: repo.dir, env })
      expect(again.code).toBe(0)
      expect(again.stderr).not.toMatch(/install/)
    } finally {
      repo.cleanup()
    }
  })

  test('an install that fails is exit 1 with the end of npm’s output, and no benchmark runs', async () => {
    const { repo, env } = peersRepo("echo 'npm error gyp failed to build isolated-vm' >&2\nexit 1")
    try {
      const run = await ptc(['bench', '--peers', '--quick', '--out', 'out'], { cwd: repo.dir, env })
      expect(run.code).toBe(1)
      expect(run.stderr).toMatch(
        /ptc: installing the peers failed after [\d.]+ s \(npm ci in bench\/peers\):\n {4}npm error gyp failed to build isolated-vm\n$/,
      )
      expect(run.stderr).not.toMatch(/\[1\/1\]/)
      expect(run.stdout).toBe('')
    } finally {
      repo.cleanup()
    }
  })

  test('a clone without bench/peers is exit 2 with the reason', async () => {
    const repo = tempDir({ 'pnpm-workspace.yaml': 'packages: []\n' })
    try {
      mkdirSync(repo.path('bench'))
      writeFileSync(repo.path('bench/run.ts'), '')
      const run = await ptc(['bench', '--peers'], { cwd: repo.dir })
      expect(run).toMatchObject({
        code: 2,
        stderr: 'ptc: bench --peers needs bench/peers/peers.ts, which this clone does not have\n',
      })
    } finally {
      repo.cleanup()
    }
  })
})

describe('ptc serve, help and usage', () => {
  test('serve hands its arguments to @ptc/mcp, or says it is not available when that is not built', async () => {
    const run = await ptc(['serve', '--no-such-option'])
    expect(run.code).toBe(2)
    if (existsSync(join(ROOT, 'packages/mcp/dist/index.js'))) {
      expect(run.stderr).toMatch(/--no-such-option/)
      expect(run.stderr).not.toMatch(/not available/)
    } else {
      expect(run.stderr).toMatch(/^ptc: the serve command is not available: @ptc\/mcp /)
    }
  })

  test('serve runs programs with the CLI’s default limits; its flags win over them', async () => {
    const upstream = `fx=node --conditions=@ptc/source --import tsx ${join(ROOT, 'packages/mcp/src/testing/fixture-server.ts')}`
    const big = {
      name: 'run_code',
      arguments: { code: 'console.log("x".repeat(40000))\nreturn 1', description: 'big' },
    }
    const env = { ...process.env, NODE_OPTIONS: '' } as Record<string, string>
    for (const [flags, limited] of [
      [[], true],
      [['--max-output', '65536'], false],
    ] as const) {
      const { client } = await connectStdioClient(process.execPath, [BIN, 'serve', '--upstream', upstream, ...flags], {
        cwd: ROOT,
        env,
      })
      try {
        const result = (await client.callTool(big, undefined, { timeout: 30_000 })) as CallToolResult
        expect(result.isError === true, JSON.stringify(result.content).slice(0, 200)).toBe(limited)
        if (limited) expect(JSON.stringify(result.content)).toContain('output-limit')
      } finally {
        await client.close()
      }
    }
  }, 60_000)

  test('help lists every command; no command at all is exit 2', async () => {
    const help = await ptc(['help'])
    expect(help.code).toBe(0)
    for (const command of ['run', 'sdk', 'check', 'log', 'bench', 'serve'])
      expect(help.stdout).toContain(`ptc ${command}`)
    const none = await ptc([])
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('ptc run FILE|-')
  })

  test('a command’s --help shows its options', async () => {
    const run = await ptc(['run', '--help'])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^ptc run FILE\|- \[options\][\s\S]*--approve yes\|no\|ask/)
  })

  test.each(['run', 'resume', 'sdk', 'check', 'log', 'bench', 'serve'])(
    'ptc %s: --help, -h and ptc help COMMAND print its usage on stdout, exit 0',
    async (command) => {
      const runs = await Promise.all([ptc([command, '--help']), ptc([command, '-h']), ptc(['help', command])])
      for (const run of runs) {
        expect(run.code).toBe(0)
        expect(run.stderr).toBe('')
        if (command === 'serve') expect(run.stdout).toMatch(/^Usage: ptc serve --upstream /)
        else expect(run.stdout).toMatch(new RegExp(`^ptc ${command} [\\s\\S]*\\n\\nExit status: 0 success`))
      }
      expect(runs[1]?.stdout).toBe(runs[0]?.stdout)
      expect(runs[2]?.stdout).toBe(runs[0]?.stdout)
    },
  )

  test('--help after -- is an argument, not a request for help; help for an unknown command is exit 2', async () => {
    const log = await ptc(['log', '--', '--help'])
    expect(log.code).toBe(2)
    expect(log.stderr).toMatch(/^ptc: cannot read session log --help: no such file/)
    const unknown = await ptc(['help', 'fly'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/^ptc: unknown command "fly"/)
  })

  test('ptc run --help and ptc serve --help show every default limit of the CLI', async () => {
    const run = (await ptc(['run', '--help'])).stdout
    for (const shown of [
      'default 10000 = 10 s',
      'default 45000 = 45 s',
      'default 256',
      'default 32768 = 32 KiB',
      'default 1000',
      '256 wait for a slot',
      '(default 10)',
      'else quickjs)',
      'else\n                          ask on a terminal, else no',
    ]) {
      expect(run).toContain(shown)
    }
    const serve = (await ptc(['serve', '--help'])).stdout
    for (const shown of [
      '(default 45000 ms)',
      '(default 10000 ms)',
      '(default 256)',
      '(default 32768)',
      'default 1000; at most 256 wait at once',
      '10 concurrency-safe ones overlap',
      'Approval: ',
      'else quickjs',
    ]) {
      expect(serve).toContain(shown)
    }
  })

  test('--version and -v print the version of @ptc/cli’s package.json', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'packages/cli/package.json'), 'utf8')) as { version: string }
    for (const flag of ['--version', '-v']) {
      const run = await ptc([flag])
      expect(run.code).toBe(0)
      expect(run.stdout).toBe(`${version}\n`)
    }
  })
})
