export { checkProgram, PROGRAM_PREFIX, type CheckProgramOptions, type CheckProgramResult, type ProgramDiagnostic } from './check-program.js'
