import { DEFAULT_LIMITS, MAX_TIMER_MS } from '@ptc/sandbox'
import { describeThrown } from '../errors.js'
import { SANDBOXES } from '../runtime.js'
import { suggestion } from '../suggest.js'
import { toolProblem } from '../tools-module.js'
import type { PtcConfig } from './define.js'

/**
 * One thing wrong with a config: where (`tools[1]`, `limits.cpuMs`; `''` for the whole export) and what, in a message
 * that names the place.
 */
export interface ConfigViolation {
  readonly path: string
  readonly message: string
}

export { suggestion }

export const CONFIG_KEYS = [
  'tools',
  'setup',
  'approval',
  'limits',
  'sandbox',
  'discovery',
] as const satisfies readonly (keyof PtcConfig)[]
const DISCOVERY_KEYS = ['budgetChars', 'alwaysLoaded']
const LIMIT_KEYS = Object.keys(DEFAULT_LIMITS)
const TIME_LIMITS = new Set(['cpuMs', 'wallMs'])

/**
 * Every problem of a loaded config's default export, in key order; empty when
 * it is a valid `PtcConfig`. Total: a getter that throws is a violation too.
 */
export function configViolations(value: unknown): ConfigViolation[] {
  try {
    return violationsOf(value)
  } catch (error) {
    return [{ path: '', message: `the config cannot be read: ${describeThrown(error)}` }]
  }
}

function violationsOf(value: unknown): ConfigViolation[] {
  if (!isPlainObject(value))
    return [
      {
        path: '',
        message: `the default export is ${kindOf(value)}, not a config object; export default defineConfig({ … })`,
      },
    ]
  const out: ConfigViolation[] = []
  for (const key of Object.keys(value)) {
    if (!(CONFIG_KEYS as readonly string[]).includes(key))
      out.push({
        path: key,
        message:
          `unknown key ` +
          `${JSON.stringify(key)}${suggestion(key, CONFIG_KEYS) || `; the keys are ${CONFIG_KEYS.join(', ')}`}`,
      })
  }
  const { tools, setup, approval, limits, sandbox, discovery } = value as Record<string, unknown>
  if (tools !== undefined) {
    if (!Array.isArray(tools))
      out.push({ path: 'tools', message: `tools must be an array of tools made with defineTool, not ${kindOf(tools)}` })
    else
      (tools as unknown[]).forEach((tool, i) => {
        const problem = toolProblem(tool)
        if (problem !== undefined)
          out.push({
            path: `tools[${i}]`,
            message: `tools[${i}] is not a tool (${problem}); make tools with defineTool`,
          })
      })
  }
  if (setup !== undefined && typeof setup !== 'function')
    out.push({ path: 'setup', message: `setup must be a function (service) => { … }, not ${kindOf(setup)}` })
  if (approval !== undefined && (!isObject(approval) || typeof approval.request !== 'function')) {
    out.push({
      path: 'approval',
      message:
        `approval must be an approval service { request(request) => Promise<'allowed-once' | 'rejected' | …> ` +
        `}, not ${isObject(approval) ? 'an object without a request function' : kindOf(approval)}`,
    })
  }
  if (limits !== undefined) out.push(...limitViolations(limits))
  if (sandbox !== undefined && !(SANDBOXES as readonly unknown[]).includes(sandbox)) {
    const shown = typeof sandbox === 'string' ? JSON.stringify(sandbox) : kindOf(sandbox)
    out.push({
      path: 'sandbox',
      message:
        `sandbox must be one of ${SANDBOXES.map((s) => JSON.stringify(s)).join(', ')}, not ` +
        `${shown}${typeof sandbox === 'string' ? suggestion(sandbox, SANDBOXES) : ''}`,
    })
  }
  if (discovery !== undefined) out.push(...discoveryViolations(discovery))
  return out
}

function discoveryViolations(discovery: unknown): ConfigViolation[] {
  if (discovery === false) return []
  if (!isPlainObject(discovery)) {
    const hint = discovery === true ? ' (omit it: discovery is on by default)' : ''
    const message = `discovery must be false or { budgetChars?, alwaysLoaded? }, not ${kindOf(discovery)}${hint}`
    return [{ path: 'discovery', message }]
  }
  const out: ConfigViolation[] = []
  for (const key of Object.keys(discovery)) {
    if (!DISCOVERY_KEYS.includes(key)) {
      const close = suggestion(key, DISCOVERY_KEYS) || `; the settings are ${DISCOVERY_KEYS.join(', ')}`
      const message = `discovery.${key} is not a discovery setting${close}`
      out.push({ path: `discovery.${key}`, message })
    }
  }
  const { budgetChars, alwaysLoaded } = discovery
  const positive = typeof budgetChars === 'number' && Number.isSafeInteger(budgetChars) && budgetChars >= 1
  if (budgetChars !== undefined && !positive) {
    const shown = typeof budgetChars === 'number' ? String(budgetChars) : kindOf(budgetChars)
    const message = `discovery.budgetChars must be a positive whole number of characters, not ${shown}`
    out.push({ path: 'discovery.budgetChars', message })
  }
  if (alwaysLoaded !== undefined) {
    if (!Array.isArray(alwaysLoaded)) {
      const message = `discovery.alwaysLoaded must be an array of tool names, not ${kindOf(alwaysLoaded)}`
      out.push({ path: 'discovery.alwaysLoaded', message })
    } else {
      ;(alwaysLoaded as unknown[]).forEach((name, i) => {
        if (typeof name !== 'string' || name.trim() === '') {
          const shown = typeof name === 'string' ? JSON.stringify(name) : kindOf(name)
          const path = `discovery.alwaysLoaded[${i}]`
          out.push({ path, message: `${path} must be a tool name, not ${shown}` })
        }
      })
    }
  }
  return out
}

function limitViolations(limits: unknown): ConfigViolation[] {
  if (!isPlainObject(limits))
    return [{ path: 'limits', message: `limits must be an object such as { cpuMs: 5000 }, not ${kindOf(limits)}` }]
  const out: ConfigViolation[] = []
  for (const [key, value] of Object.entries(limits)) {
    const path = `limits.${key}`
    if (!LIMIT_KEYS.includes(key))
      out.push({
        path,
        message: `${path} is not a limit${suggestion(key, LIMIT_KEYS) || `; the limits are ${LIMIT_KEYS.join(', ')}`}`,
      })
    else if (value === undefined) continue
    else if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
      out.push({
        path,
        message:
          `${path} must be a non-negative number, not ` +
          `${typeof value === 'number' ? String(value) : kindOf(value)}`,
      })
    else if (TIME_LIMITS.has(key) && value > MAX_TIMER_MS)
      out.push({ path, message: `${path} must be at most ${MAX_TIMER_MS} ms, not ${value}` })
  }
  return out
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!isObject(value) || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value) as unknown
  return proto === Object.prototype || proto === null
}

function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return isPlainObject(value) ? 'an object' : 'an object of a class'
  return typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`
}
