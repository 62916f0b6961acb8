import { ToolTimeoutError } from '../errors.js'
import { MAX_TIMER_MS } from '../executor/bounded.js'
import { failureResult } from '../pipeline/results.js'
import { whenAborted } from '../pipeline/signal.js'
import type { ToolsView } from '../registry/service.js'
import type { ToolDispatchExecution, ToolExecutionResult } from '../types/tool.js'

/**
 * The timeout policy: a `tools/execute` wrapper that arms a deadline from the
 * executing definition's `timeoutMs`. The body sees a signal that aborts at
 * the deadline (fused with the caller's by the pipeline). Only when this
 * wrapper's own timer fired — and the caller had not aborted first — does the
 * result become `TOOL_TIMEOUT`. Tools without a budget are untouched.
 * Install it on the global view or a scoped one; returns the disposer.
 */
export function installTimeoutPolicy(tools: ToolsView): () => void {
  return tools.on(
    'tools/execute',
    async function timeoutPolicy(exec: ToolDispatchExecution, next): Promise<ToolExecutionResult> {
      const timeoutMs = tools.executable(exec.name, exec.agent, exec.toolSet)?.timeoutMs
      if (timeoutMs === undefined) return next()
      const outer = exec.signal
      const controller = new AbortController()
      let fired = false
      // A platform timer fires at once beyond 2^31-1 ms: a longer budget is armed in steps.
      const deadline = Date.now() + timeoutMs
      let timer: ReturnType<typeof setTimeout> | undefined
      const arm = (ms: number): void => {
        timer = setTimeout(() => {
          const left = deadline - Date.now()
          if (left > 0 && ms === MAX_TIMER_MS) return arm(Math.min(left, MAX_TIMER_MS))
          if (outer.aborted) return
          fired = true
          controller.abort(new ToolTimeoutError(timeoutMs))
        }, ms)
      }
      arm(Math.min(timeoutMs, MAX_TIMER_MS))
      const stopOuter = whenAborted(outer, () => controller.abort(outer.reason))
      exec.signal = controller.signal
      try {
        const result = await next()
        return fired ? failureResult('TOOL_TIMEOUT', `tool call timed out after ${timeoutMs} ms`) : result
      } finally {
        clearTimeout(timer)
        stopOuter()
        exec.signal = outer
      }
    },
  )
}
