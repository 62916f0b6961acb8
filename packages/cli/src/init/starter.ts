import type { StarterVersions } from './versions.js'

/** The files `ptc init` writes, by name, in the order they are written. */
export function starterFiles(name: string, versions: StarterVersions): ReadonlyMap<string, string> {
  const manifest = {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    scripts: { start: 'ptc run program.ts', check: 'ptc check program.ts', sdk: 'ptc sdk', typecheck: 'tsc -p .' },
    dependencies: {
      '@ptc/cli': versions.cli,
      '@ptc/tools': versions.tools,
      tsx: versions.tsx,
      typescript: versions.typescript,
    },
    // isolated-vm (the optional native backend, `--sandbox isolated-vm`) builds in its install script, which npm
    // 12 runs only for a dependency the project allows (npm 11 runs it and warns that it is not yet allowed).
    allowScripts: { 'isolated-vm': true },
  }
  const tsconfig = {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    },
    include: ['ptc.config.ts'],
  }
  return new Map([
    ['package.json', `${JSON.stringify(manifest, null, 2)}\n`],
    ['ptc.config.ts', CONFIG],
    ['program.ts', PROGRAM],
    ['tsconfig.json', `${JSON.stringify(tsconfig, null, 2)}\n`],
    ['.gitignore', GITIGNORE],
    ['README.md', readme(name)],
  ])
}

/**
 * What a project keeps out of git: what ptc writes holds state or secrets (session logs, sandbox sessions and
 * suspended programs with the secrets that seal them, all under `.ptc/` unless a flag says otherwise).
 */
const GITIGNORE = `node_modules/
# ptc's state: session logs (ptc run --session), sandbox sessions and suspended programs with their secrets
*.jsonl
.ptc/
`

/** An npm package name from a folder name (lower case, `-` for anything else), else `ptc-starter`. */
export function packageName(folder: string): string {
  const name = folder
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, '-')
    .replace(/^[-._~]+/, '')
    .slice(0, 200)
    .replace(/-+$/, '')
  return name === '' || name === 'node_modules' || name === 'favicon.ico' ? 'ptc-starter' : name
}

const readme = (name: string): string => `# ${name}

A ptc project (Programmatic Tool Calling): \`program.ts\` is a program such as a model
writes for \`run_code\`; it runs in a sandbox, where every tool of \`ptc.config.ts\` is an async function
and every call goes through the config's policies and approval service.

    npm install /path/to/ptc/.packs/*.tgz   # the @ptc packages, packed in a clone of ptc (see below)
    npx ptc run program.ts      # run it (npm start)
    npx ptc check program.ts    # type-check it against the tools' declarations
    npx ptc sdk                 # what a model is told about the tools

The @ptc packages are not on the npm registry yet: \`npx --yes pnpm@10.34.9 install && npx --yes pnpm@10.34.9
pack:all\` in a clone of ptc packs them into its \`.packs/\` folder, and \`npm install\` takes those tarballs (the
ptc README, "Quick start in your own project"). Once they are published, a plain \`npm install\` will do.

\`npm install\` compiles isolated-vm, the optional native backend, from source: it can print nothing for a few
minutes. Without python3, make and g++ that build fails, the install still succeeds, and programs run on QuickJS.
\`npx ptc run --sandbox isolated-vm\` runs programs in the native backend when it was built (\`allowScripts\` in
\`package.json\` lets npm run its build); otherwise the command says what is missing.

\`ptc run --approve yes|no\` answers approvals instead of the config; \`--session run.jsonl\` logs
every call, \`npx ptc log run.jsonl\` shows it. \`tsconfig.json\` covers the config only: a program is the
body of an async function (top-level \`return\`), checked by \`ptc check\`.
`

const CONFIG = `/**
 * The ptc config of this project, read by \`ptc run\`, \`check\`, \`sdk\` and \`serve\` in this folder:
 * the tools programs call, the policies every call goes through, who answers approval requests,
 * and the limits of each run.
 */
import { defineConfig } from '@ptc/cli'
import { defineTool } from '@ptc/tools'

/** Orders of more units than this are refused outright. */
const MAX_ORDER_UNITS = 500
/** Orders of at most this many units are approved without asking anyone. */
const AUTO_APPROVE_UNITS = 50

/** A small warehouse, in memory: units on hand and the level at which to restock. */
const stock = new Map([
  ['apple', { units: 3, reorderLevel: 10 }],
  ['pear', { units: 0, reorderLevel: 40 }],
  ['plum', { units: 2, reorderLevel: 300 }],
  ['quince', { units: 25, reorderLevel: 5 }],
])
let lastOrder = 1000

const getStock = defineTool({
  name: 'get_stock',
  description: 'Units on hand of a product, and the level at or below which it should be restocked.',
  parameters: { sku: { type: 'string', required: true, description: 'apple, pear, plum or quince' } },
  output: {
    schema: {
      type: 'object',
      additionalProperties: false,
      properties: { sku: { type: 'string', required: true }, units: { type: 'integer', required: true }, reorderLevel: { type: 'integer', required: true } },
    },
    render: (_args, item) => [{ type: 'text', text: \`\${item.sku}: \${item.units} units (restock at \${item.reorderLevel})\` }],
  },
  isConcurrencySafe: () => true,
  execute: async ({ sku }) => {
    const item = stock.get(sku)
    if (item === undefined) throw new Error(\`no product \${JSON.stringify(sku)}\`)
    return { sku, ...item }
  },
})

const orderStock = defineTool({
  name: 'order_stock',
  description: \`Orders units of a product from the supplier. Every order needs approval; more than \${MAX_ORDER_UNITS} units are refused.\`,
  parameters: {
    sku: { type: 'string', required: true },
    quantity: { type: 'integer', required: true, description: 'units to order, at least 1' },
  },
  output: {
    schema: {
      type: 'object',
      additionalProperties: false,
      properties: { orderId: { type: 'string', required: true }, sku: { type: 'string', required: true }, quantity: { type: 'integer', required: true } },
    },
    render: (_args, order) => [{ type: 'text', text: \`\${order.orderId}: \${order.quantity} x \${order.sku}\` }],
  },
  execute: async ({ sku, quantity }) => {
    const item = stock.get(sku)
    if (item === undefined) throw new Error(\`no product \${JSON.stringify(sku)}\`)
    if (quantity < 1) throw new Error('order at least one unit')
    item.units += quantity
    return { orderId: \`PO-\${++lastOrder}\`, sku, quantity }
  },
})

/** A field of a call's arguments (checked against the tool's parameters before policies run, typed as any JSON). */
function field(args: unknown, key: string): unknown {
  return typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>)[key] : undefined
}

export default defineConfig({
  tools: [getStock, orderStock],
  setup(service) {
    // Policy: an order over the purchasing limit is denied; the program sees a ToolCallError with code DENIED.
    service.on('tools/pre-execute', (exec, next) => {
      const quantity = field(exec.arguments, 'quantity')
      if (exec.name !== 'order_stock' || typeof quantity !== 'number' || quantity <= MAX_ORDER_UNITS) return next()
      return { kind: 'deny', reason: \`\${quantity} units exceed the purchasing limit of \${MAX_ORDER_UNITS}\` }
    })
    // Policy: every other order asks for approval (answered by \`approval\` below).
    service.on('tools/pre-execute', (exec, next) => {
      if (exec.name !== 'order_stock') return next()
      return { kind: 'ask', reason: \`order \${String(field(exec.arguments, 'quantity'))} x \${String(field(exec.arguments, 'sku'))}\` }
    })
  },
  // Answers the calls a policy asks about, in code: small orders yes, larger ones no.
  // (\`ptc run --approve yes|no\` overrides it.)
  approval: {
    request: async ({ exec }) => {
      const quantity = field(exec.arguments, 'quantity')
      return typeof quantity === 'number' && quantity <= AUTO_APPROVE_UNITS ? 'allowed-once' : 'rejected'
    },
  },
  // Every run: CPU and wall-clock time, sandbox memory, tool calls.
  limits: { cpuMs: 5_000, wallMs: 15_000, memoryBytes: 64 * 1024 * 1024, maxSubCalls: 100 },
  sandbox: 'quickjs',
})
`

const PROGRAM = `// @description Restock every product that runs low
// A program such as a model writes for run_code: the body of an async function, run in the sandbox
// by \`npx ptc run program.ts\`. Each tools.* call goes through the policies of ptc.config.ts.
const skus = ['apple', 'pear', 'plum', 'quince']
const items = await Promise.all(skus.map((sku) => tools.get_stock({ sku })))
const lines: string[] = []
for (const item of items.filter((i) => i.units <= i.reorderLevel)) {
  const quantity = item.reorderLevel * 2 - item.units
  try {
    const order = await tools.order_stock({ sku: item.sku, quantity })
    lines.push(\`\${item.sku}: ordered \${order.quantity} units (\${order.orderId})\`)
  } catch (e) {
    // A policy or the approval service said no: the call rejects with a ToolCallError, code DENIED.
    if (e instanceof ToolCallError && e.code === 'DENIED') lines.push(\`\${item.sku}: not ordered: \${e.message}\`)
    else throw e
  }
}
return lines.join('\\n')
`
