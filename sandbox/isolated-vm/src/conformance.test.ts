import { runtimeConformance } from '@ptc/sandbox/conformance'
import { describe } from 'vitest'
import { createIsolatedVmRuntime, isolatedVmAvailability } from './index.js'

const availability = isolatedVmAvailability()

describe.skipIf(!availability.available)(
  `isolated-vm backend${availability.available ? '' : ` (skipped: ${availability.reason})`}`,
  () => {
    runtimeConformance('isolated-vm', () => createIsolatedVmRuntime(), { sessions: true })
    runtimeConformance('isolated-vm without containment', () => createIsolatedVmRuntime({ containment: 'none' }), {
      sessions: true,
    })
  },
)
