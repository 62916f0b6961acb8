/**
 * The `execArgv` of a worker thread the sandbox starts: the process's own, without `--input-type`, which
 * applies only to the `--eval` text of the process (a worker inheriting it fails to start: "--input-type can
 * only be used with string input via --eval"), so a host started as `node --input-type=module -e …` can
 * still use worker isolation.
 */
export function workerExecArgv(): string[] {
  const argv: string[] = []
  for (let i = 0; i < process.execArgv.length; i++) {
    const arg = process.execArgv[i] as string
    if (arg === '--input-type') i++
    else if (!arg.startsWith('--input-type=')) argv.push(arg)
  }
  return argv
}
