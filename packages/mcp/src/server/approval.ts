import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { RequestId } from '@modelcontextprotocol/sdk/types.js'
import type { ApprovalOutcome, ApprovalRequest, ApprovalService } from '@ptc/tools'
import { batchSignal } from '@ptc/tools/executor'

/**
 * An `ApprovalService` that asks the MCP client that made the call, through elicitation (a form with one
 * "allow" checkbox), when that client supports it; otherwise the answer is `unavailable` (a denial). Give it
 * to the `ToolsService` and to `createPtcMcpServer({ approval })`, which tells it which client each call
 * came from.
 */
export interface McpApproval extends ApprovalService {
  /**
   * The calls in flight, by root call id: the protocol server (one client connection) each came from, and the id
   * of its request, whose stream carries the question (over Streamable HTTP, a client need open no other stream).
   */
  readonly callers: Map<string, McpCaller>
}

/** Where a call in flight came from (see `McpApproval.callers`). */
export interface McpCaller {
  readonly server: Server
  readonly requestId: RequestId
}

export function createMcpApproval(): McpApproval {
  const callers = new Map<string, McpCaller>()
  return {
    callers,
    async request(request: ApprovalRequest): Promise<ApprovalOutcome> {
      const caller = callers.get(request.exec.rootCallId)
      if (caller === undefined || caller.server.getClientCapabilities()?.elicitation === undefined) return 'unavailable'
      const why = request.displayReason?.en ?? request.reason
      // Its own signal, released once answered: the SDK cancels a request whose signal aborts even when it was
      // answered (see `UpstreamConnection.call`), and the run's aborts when its program ends.
      const own = batchSignal(request.signal)
      try {
        const answer = await caller.server.elicitInput(
          {
            message:
              `Allow the call of ${request.exec.name} ` +
              `(${request.exec.callId})${why === undefined ? '' : `: ${why}`}?`,
            requestedSchema: {
              type: 'object',
              properties: { allow: { type: 'boolean', title: 'Allow this call', default: false } },
              required: ['allow'],
            },
          },
          { signal: own.signal, relatedRequestId: caller.requestId },
        )
        if (answer.action === 'accept' && answer.content?.['allow'] === true) return 'allowed-once'
        return answer.action === 'cancel' ? 'cancelled' : { outcome: 'rejected', by: "the MCP client's user" }
      } catch {
        // The client failed the request, went away, or the call was aborted: nobody approved it.
        return 'cancelled'
      } finally {
        own.release()
      }
    },
  }
}
