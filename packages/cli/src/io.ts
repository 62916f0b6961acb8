/** The process streams a command uses (tests and embedders pass their own). */
export interface CliIo {
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean }
  readonly stdout: NodeJS.WritableStream
  readonly stderr: NodeJS.WritableStream
  /** Folder that relative paths are resolved against. */
  readonly cwd: string
}

export function processIo(): CliIo {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, cwd: process.cwd() }
}

/** Writes `text` plus a newline. */
export function writeLine(stream: NodeJS.WritableStream, text = ''): void {
  stream.write(`${text}\n`)
}
