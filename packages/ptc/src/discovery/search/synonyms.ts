import { stemmer } from 'stemmer'

/**
 * Words rewritten on both sides (declarations and requests) before stemming: short forms spelt out, so `repo`
 * and `repository` are one term, and forms the stemmer leaves apart (`assignee`, `assign`).
 */
export const CANONICAL: ReadonlyMap<string, string> = new Map([
  ['repo', 'repository'],
  ['repos', 'repositories'],
  ['pr', 'pull request'],
  ['prs', 'pull requests'],
  ['org', 'organization'],
  ['orgs', 'organizations'],
  ['env', 'environment'],
  ['envs', 'environments'],
  ['config', 'configuration'],
  ['dir', 'directory'],
  ['dirs', 'directories'],
  ['msg', 'message'],
  ['info', 'information'],
  ['auth', 'authentication'],
  ['db', 'database'],
  ['desc', 'description'],
  ['img', 'image'],
  ['app', 'application'],
  ['apps', 'applications'],
  ['assignee', 'assign'],
  ['assignees', 'assign'],
])

/** Two-word phrases read as one word before anything else (`look up` is `lookup`, not a search for `up`). */
export const PHRASES: ReadonlyMap<string, string> = new Map([
  ['look up', 'lookup'],
  ['set up', 'setup'],
  ['log in', 'authenticated'],
  ['logged in', 'authenticated'],
  ['sign in', 'authenticated'],
  ['signed in', 'authenticated'],
  ['how many', 'count'],
  ['how much', 'count'],
  ['for me', 'my'],
])

/**
 * Words a request may use for what a declaration says otherwise. A group is not an equivalence: a request's
 * word counts fully, its group's first word (the verb or noun APIs name things with) at a lower weight, and
 * the group's other words lower still.
 */
const GROUPS: readonly string[] = [
  'get fetch read show retrieve view display see lookup inspect return',
  'list enumerate all browse every show',
  'create add new open make insert post',
  'delete remove drop destroy erase purge discard',
  'update edit change modify set alter patch replace rename',
  'search find query look filter',
  'close resolve finish',
  'reopen restore',
  'start run trigger launch execute begin kick dispatch',
  'stop cancel abort halt terminate kill',
  'enable activate turn allow',
  'disable deactivate block',
  'download export fetch',
  'upload attach',
  'invite invitation',
  'subscribe subscription watch follow',
  'star favorite bookmark like',
  'user person people account member developer who',
  'authenticated my mine myself',
  'create setup',
  'issue ticket bug',
  'comment reply note',
  'label tag',
  'release version',
  'workflow action pipeline job',
  'secret credential token password',
  'webhook hook callback',
  'collaborator contributor',
  'file document content',
  'directory folder',
  'move rename',
  'write save store',
  'image picture screenshot photo',
  'navigate go visit browse',
  'click press tap',
  'type fill enter input',
  'time clock date',
  'convert translate',
  'message chat post',
  'channel room conversation',
  'remember memorize memory',
  'entity node',
  'relation relationship link edge',
  'statistics stats metrics traffic',
  'count number total',
  'diff difference compare',
  'copy duplicate clone',
  'latest recent newest last current',
  'add give grant',
  'reaction react emoji',
  'review approve',
]

const stems = (words: string): string[] => words.split(' ').map((word) => stemmer(word))

/** A synonym of a word: its stem, and whether it heads its group. */
export interface Synonym {
  readonly stem: string
  readonly head: boolean
}

/** For each stem, the other words of its groups (a head word once, as a head). */
export const SYNONYMS: ReadonlyMap<string, readonly Synonym[]> = (() => {
  const map = new Map<string, Map<string, boolean>>()
  for (const group of GROUPS.map(stems)) {
    for (const stem of group) {
      const others = map.get(stem) ?? new Map<string, boolean>()
      group.forEach((other, i) => {
        if (other !== stem) others.set(other, (others.get(other) ?? false) || i === 0)
      })
      map.set(stem, others)
    }
  }
  const sorted = (others: Map<string, boolean>): Synonym[] =>
    [...others].map(([stem, head]) => ({ stem, head })).sort((a, b) => (a.stem < b.stem ? -1 : 1))
  return new Map([...map].map(([stem, others]) => [stem, sorted(others)]))
})()
