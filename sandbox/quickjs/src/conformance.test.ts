import { runtimeConformance } from '@ptc/sandbox/conformance'
import { createQuickJSRuntime } from './index.js'

const INLINE_SKIPS = {
  'a run aborted during a busy loop fails with abort':
    'inline isolation runs the guest on the calling thread: a busy guest blocks the event loop, so the AbortSignal cannot fire until the CPU budget stops the guest',
  'dispose aborts live runs and waits for them; later runs reject':
    'inline isolation: dispose() cannot run while a busy guest holds the calling thread (same reason as abort during a busy loop)',
}

runtimeConformance('quickjs worker', () => createQuickJSRuntime({ isolation: 'worker' }), { sessions: true })
runtimeConformance('quickjs inline', () => createQuickJSRuntime({ isolation: 'inline' }), {
  skip: INLINE_SKIPS,
  sessions: true,
})
runtimeConformance('quickjs-ng inline', () => createQuickJSRuntime({ isolation: 'inline', variant: 'quickjs-ng' }), {
  skip: INLINE_SKIPS,
})
