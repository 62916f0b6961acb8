export { BindingNameError, BindingsError, type BindingNameProblem, type BindingsErrorCode } from './errors.js'
export { assertValidBindingNames, bindingKey, isIdentifierName, validateBindingNames } from './names/binding-names.js'
export {
  DEFAULT_MAX_DEPTH,
  renderDeclarations,
  renderToolDeclaration,
  renderSdk,
  type BindingTool,
  type RenderDeclarationsOptions,
  type RenderedSdk,
} from './render/declarations.js'
export { searchToolsBinding } from './render/search-tools.js'
