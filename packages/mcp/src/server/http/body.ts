import type { IncomingMessage } from 'node:http'

export type BodyRead =
  | { readonly kind: 'ok'; readonly text: string }
  | { readonly kind: 'too-large' }
  | { readonly kind: 'aborted' }

/**
 * Read the request body as UTF-8 text, at most `maxBytes`. A `Content-Length`
 * over the limit is refused before reading anything; otherwise reading stops
 * (the stream is paused, what was read is dropped) as soon as the limit passes.
 * `onStart` runs when reading starts (to send `100 Continue`).
 */
export function readBody(req: IncomingMessage, maxBytes: number, onStart?: () => void): Promise<BodyRead> {
  const declared = req.headers['content-length']
  if (declared !== undefined && !(Number(declared) <= maxBytes)) return Promise.resolve({ kind: 'too-large' })
  onStart?.()
  return new Promise((resolve) => {
    let chunks: Buffer[] = []
    let size = 0
    const settle = (result: BodyRead): void => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('close', onClose)
      req.off('error', onClose)
      resolve(result)
    }
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      if (size <= maxBytes) return void chunks.push(chunk)
      req.pause()
      chunks = []
      settle({ kind: 'too-large' })
    }
    const onEnd = (): void => settle({ kind: 'ok', text: Buffer.concat(chunks).toString('utf8') })
    const onClose = (): void => settle({ kind: 'aborted' })
    req.on('data', onData)
    req.once('end', onEnd)
    req.once('close', onClose)
    req.once('error', onClose)
  })
}

/** `JSON.parse` as a result. */
export function parseJson(text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch {
    return { ok: false }
  }
}
