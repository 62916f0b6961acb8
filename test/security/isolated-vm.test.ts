import { createIsolatedVmRuntime, isolatedVmAvailability } from '@ptc/sandbox-isolated-vm'
import { describe } from 'vitest'
import { hostileProgramSuite } from './hostile.suite.js'

const availability = isolatedVmAvailability()

describe.skipIf(!availability.available)(
  `isolated-vm${availability.available ? '' : ` (skipped: ${availability.reason})`}`,
  () => {
    // Guests run on isolated-vm's own threads; the host thread only moves strings, so lag stays small.
    hostileProgramSuite('isolated-vm', () => createIsolatedVmRuntime(), {
      maxLagMs: 250,
      skip: {
        // The constructor-chain probes themselves are repeated in sandbox/isolated-vm/src/runtime.test.ts.
        'constructor-chain escapes through every injected object and host error reach only the guest realm':
          "its host throws Error(`host failure at ${stack}`), so the host's paths are in the message, which crosses by design; " +
          "V8's `stack` starts with `name: message` (QuickJS's does not), so `hostStack` is true on V8 though no host frame " +
          'crossed. Needs the suite to test the frames only (`e.stack` after its `${name}: ${message}` head) or a message without a stack.',
      },
    })
  },
)
