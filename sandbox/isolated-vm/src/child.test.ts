import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { expect, test } from 'vitest'
import type { ChildConfig } from './engine/child-entry.js'
import { EngineChild } from './host/child.js'

const fixture = fileURLToPath(new URL('./fixtures/unreadable-engine.ts', import.meta.url))
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm')).href

/**
 * The engine process runs the guest's isolates: only a broken or compromised one sends what the host cannot
 * read, and the host must then lose that process (its runs fail as crash), never its own.
 */
test.each(['null', 'batch', 'untyped'])(
  'an engine process that sends what the host cannot read (%s) is killed; the host goes on',
  async (junk) => {
    const events: string[] = []
    let child: EngineChild | undefined
    await new Promise<void>((resolve) => {
      const owner = {
        ready: () => void events.push('ready'),
        freed: () => undefined,
        answered: () => undefined,
        exited: (_child: EngineChild, started: boolean) => {
          events.push(`exited (started: ${started})`)
          resolve()
        },
      }
      child = new EngineChild(owner, { junk } as unknown as ChildConfig, 100, {
        entry: fixture,
        execArgv: ['--import', tsx],
      })
    })
    expect(events).toEqual(junk === 'batch' ? ['exited (started: false)'] : ['ready', 'exited (started: true)'])
    expect(child?.gone).toMatch(
      /^it was killed: it sent a message the host cannot read \((not a batch of messages|not a message)\)$/,
    )
  },
  30_000,
)
