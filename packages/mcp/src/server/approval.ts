import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { ApprovalOutcome, ApprovalRequest, ApprovalService } from '@ptc/tools'

/**
 * An `ApprovalService` that asks the MCP client that made the call, through elicitation (a form with one
 * "allow" checkbox), when that client supports it; otherwise the answer is `unavailable` (a denial). Give it
 * to the `ToolsService` and to `createPtcMcpServer({ approval })`, which tells it which client each call
 * came from.
 */
export interface McpApproval extends ApprovalService {
  /** The calls in flight and the protocol server (one client connection) each came from, by root call id. */
  readonly callers: Map<string, Server>
}

export function createMcpApproval(): McpApproval {
  const callers = new Map<string, Server>()
  return {
    callers,
    async request(request: ApprovalRequest): Promise<ApprovalOutcome> {
      const server = callers.get(request.exec.rootCallId)
      if (server === undefined || server.getClientCapabilities()?.elicitation === undefined) return 'unavailable'
      const why = request.displayReason?.en ?? request.reason
      try {
        const answer = await server.elicitInput(
          {
            message: `Allow the call of ${request.exec.name} (${request.exec.callId})${why === undefined ? '' : `: ${why}`}?`,
            requestedSchema: { type: 'object', properties: { allow: { type: 'boolean', title: 'Allow this call', default: false } }, required: ['allow'] },
          },
          { signal: request.signal },
        )
        if (answer.action === 'accept') return answer.content?.['allow'] === true ? 'allowed-once' : 'rejected'
        return answer.action === 'decline' ? 'rejected' : 'cancelled'
      } catch {
        // The client failed the request, went away, or the call was aborted: nobody approved it.
        return 'cancelled'
      }
    },
  }
}
