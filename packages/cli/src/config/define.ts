import type { CodeRunLimits } from '@ptc/sandbox'
import type { ApprovalService, ToolDefinition, ToolsService } from '@ptc/tools'

/** The sandbox backends a config (or `--sandbox`) can choose. */
export type PtcSandboxName = 'quickjs' | 'isolated-vm'

/**
 * `PtcConfig.discovery`: `false` (every declaration always), or when the model reads an index and `search_tools`
 * instead of every declaration (the PTC executor's `discovery`).
 */
export type PtcDiscoveryConfig =
  | false
  | {
      /** Past this many characters of SDK text (guidance, declarations), declarations are deferred (default 8 000). */
      readonly budgetChars?: number
      /** Tools whose declarations the model always reads. */
      readonly alwaysLoaded?: readonly string[]
    }

/**
 * What a `ptc.config.ts` exports by default, read by `ptc run`, `check`, `sdk`
 * and `serve`. Every key is optional.
 */
export interface PtcConfig {
  /** The tools programs call, made with `defineTool`. `--tools MODULE` replaces them. */
  readonly tools?: readonly ToolDefinition[]
  /**
   * Installs policies (`service.on('tools/pre-execute', …)`), guards
   * (`service.guard(…)`) and listeners on the registry, after the tools are
   * registered and before any call. May be async (the promise is awaited); what
   * it returns otherwise (the disposer of `service.on(…)`, say) is ignored.
   */
  readonly setup?: (service: ToolsService) => unknown
  /**
   * Answers the calls a policy answers with `ask` (only `'allowed-once'` lets a
   * call run). `ptc run --approve yes|no|ask` overrides it; without either,
   * `ptc run` prompts on a terminal and rejects otherwise.
   */
  readonly approval?: ApprovalService
  /** Limits of every run (the CLI's defaults under them, `--timeout` and `--memory` over them). */
  readonly limits?: Partial<CodeRunLimits>
  /** The sandbox backend (default `quickjs`); `--sandbox` wins. */
  readonly sandbox?: PtcSandboxName
  /** Tool discovery (default on, 8 000 characters); `--discovery-budget`, `--always-load` and `--no-discovery` win. */
  readonly discovery?: PtcDiscoveryConfig
}

/**
 * Types a `ptc.config.ts` and returns it as it is:
 * `export default defineConfig({ tools: [weather], setup(service) { … } })`.
 */
export function defineConfig(config: PtcConfig): PtcConfig {
  return config
}
