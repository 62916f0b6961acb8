/**
 * The worker that prepares one long program off the host's thread (see `prepareOffThread` in
 * `strip.ts`): strips its TypeScript, then, for a session program, makes its session source (a parse of
 * the whole program). Posts one `PreparedOffThread` message.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { wrapSessionSource } from './program.js'
import { stripTypeScript, type PrepareJob, type PreparedOffThread } from './strip.js'

const job = workerData as PrepareJob
const stripped = job.typescript ? stripTypeScript(job.code) : { ok: true as const, code: job.code }
const message: PreparedOffThread = stripped.ok && job.session ? { stripped, source: wrapSessionSource(stripped.code) } : { stripped }
parentPort?.postMessage(message)
