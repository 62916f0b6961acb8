export {
  checkedToolNames,
  type CatalogSdk,
  type ToolCatalog,
  type ToolDeclarationCatalog,
  type ToolSchemaCatalog,
} from './catalog.js'
export {
  checkProgram,
  PROGRAM_PREFIX,
  type CheckProgramOptions,
  type CheckProgramResult,
  type ProgramDiagnostic,
} from './check-program.js'
export { searchToolsBinding } from '../render/search-tools.js'
export {
  checkProgramBounded,
  DEFAULT_CHECK_BOUNDS,
  type CheckBounds,
  type CheckProgramBoundedOptions,
} from './check-program-bounded.js'
export { CheckError, type CheckErrorCode } from './errors.js'
