import { SandboxUsageError } from './errors.js'

/**
 * Checks the binding names of a run request: an array of distinct non-empty strings. Any string
 * works (the guest reaches non-identifiers through `tools["name"]`; `__proto__` is an ordinary key).
 * Returns a frozen copy; throws `SandboxUsageError` on misuse.
 */
export function validateBindings(bindings: unknown): readonly string[] {
  if (!Array.isArray(bindings)) throw new SandboxUsageError('bindings must be an array of strings')
  const seen = new Set<string>()
  const out: string[] = []
  for (let i = 0; i < bindings.length; i++) {
    if (!(i in bindings)) throw new SandboxUsageError(`bindings[${i}] is missing`)
    const name: unknown = bindings[i]
    if (typeof name !== 'string') throw new SandboxUsageError(`bindings[${i}] is not a string`)
    if (name.length === 0) throw new SandboxUsageError(`bindings[${i}] is empty`)
    if (seen.has(name)) throw new SandboxUsageError(`duplicate binding "${name}"`)
    seen.add(name)
    out.push(name)
  }
  return Object.freeze(out)
}
