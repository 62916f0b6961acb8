import { isIP } from 'node:net'
import { networkInterfaces } from 'node:os'

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'] as const
const WILDCARD = new Set(['0.0.0.0', '::', '[::]'])

/** `127.0.0.1`, `::1` (bracketed or not) or `localhost`, in any case. */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase()
  return name === '127.0.0.1' || name === 'localhost' || name === '::1' || name === '[::1]'
}

/** A host as it appears in a `Host` header: lowercase, IPv6 in brackets, and a port when one was given. */
export interface HostName {
  readonly hostname: string
  readonly port?: number
}

/** Parse `name`, `name:port`, `[v6]` or `[v6]:port`; `undefined` when it is none of those. */
export function parseHostName(text: string): HostName | undefined {
  const value = text.toLowerCase()
  let hostname: string
  let rest: string
  if (value.startsWith('[')) {
    const end = value.indexOf(']')
    if (end < 0) return undefined
    hostname = value.slice(0, end + 1)
    rest = value.slice(end + 1)
    if (isIP(hostname.slice(1, -1)) !== 6) return undefined
  } else {
    const colon = value.indexOf(':')
    hostname = colon < 0 ? value : value.slice(0, colon)
    rest = colon < 0 ? '' : value.slice(colon)
    if (!/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(hostname)) return undefined
  }
  if (rest === '') return { hostname }
  if (!/^:\d{1,5}$/.test(rest)) return undefined
  const port = Number(rest.slice(1))
  return port <= 65_535 ? { hostname, port } : undefined
}

/** An `--allow-host` value: a bare IPv6 address is accepted too (`::1` means `[::1]`). */
export function parseAllowedHost(text: string): HostName | undefined {
  return isIP(text) === 6 ? { hostname: `[${text.toLowerCase()}]` } : parseHostName(text)
}

/** The key a `Host` header value is looked up by (`hostname:port`; no port means 80), or `undefined` when malformed. */
export function hostKey(header: string): string | undefined {
  const name = parseHostName(header)
  return name === undefined ? undefined : `${name.hostname}:${name.port ?? 80}`
}

/** The normalized origin (`scheme://host[:port]`) of an http(s) origin or URL without path, query or credentials. */
export function parseOrigin(text: string): string | undefined {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return undefined
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || url.pathname !== '/')
    return undefined
  return url.origin
}

/**
 * The `Host` values accepted (as `hostKey`s). Loopback bind: the loopback
 * names on `port`. Wildcard bind (`0.0.0.0`, `::`): those plus every local
 * interface address. Any other bind: the bind name and the bound address.
 * `extra` (`--allow-host`) is added in every case; a name without a port gets `port`.
 */
export function allowedHostKeys(bind: {
  host: string
  address: string
  port: number
  extra: readonly HostName[]
}): Set<string> {
  const { host, address, port } = bind
  const names = new Set<string>()
  const add = (hostname: string): void => void names.add(`${bracket(hostname.toLowerCase())}:${port}`)
  if (isLoopbackHost(host) || WILDCARD.has(host)) for (const name of LOOPBACK_NAMES) add(name)
  if (WILDCARD.has(host)) {
    for (const list of Object.values(networkInterfaces())) for (const info of list ?? []) add(info.address)
  } else if (!isLoopbackHost(host)) {
    add(host)
    add(address)
  }
  for (const name of bind.extra) names.add(`${name.hostname}:${name.port ?? port}`)
  return names
}

/** The origins accepted: the loopback ones on `port`, plus `extra` (already normalized). */
export function allowedOrigins(port: number, extra: readonly string[]): Set<string> {
  const origins = new Set(extra)
  for (const name of LOOPBACK_NAMES) origins.add(new URL(`http://${name}:${port}`).origin)
  return origins
}

function bracket(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host
}
