import { formatViolations } from '../errors.js'
import type { JsonValue } from '../json/types.js'
import type { Registration } from '../registry/registration.js'
import { validateJsonSchemaValue } from '../schema/validate.js'

/**
 * Why a call's arguments do not match the parameters its tool declares (the message of its `INVALID_ARGS`), or
 * undefined when they match. The early gate before any policy: policies see only valid arguments and nobody is
 * asked to approve a malformed call; the body still validates what it receives. The message is the one `defineTool`'s
 * body gives. The registration's frozen schema keys the compiled validator: each registration compiles once.
 */
export function argumentsProblem(reg: Registration, args: JsonValue): string | undefined {
  const violations = validateJsonSchemaValue(reg.parameters, args)
  return violations.length === 0 ? undefined : `invalid arguments: ${formatViolations(violations)}`
}
