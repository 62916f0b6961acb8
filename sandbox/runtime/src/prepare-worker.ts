/**
 * The worker that prepares long programs off the host's thread (see `prepareOffThread` in `strip.ts`): for
 * each job posted to it, strips its TypeScript, then, for a session program, makes its session source (a
 * parse of the whole program), and posts one `PreparedOffThread` message. It waits for the next job until
 * the host ends it.
 */
import { parentPort } from 'node:worker_threads'
import { wrapSessionSource } from './program.js'
import { stripTypeScript, type PrepareJob, type PreparedOffThread } from './strip.js'

function prepare(job: PrepareJob): PreparedOffThread {
  const stripped = job.typescript ? stripTypeScript(job.code) : { ok: true as const, code: job.code }
  return stripped.ok && job.session ? { stripped, source: wrapSessionSource(stripped.code) } : { stripped }
}

parentPort?.on('message', (job: PrepareJob) => parentPort?.postMessage(prepare(job)))
