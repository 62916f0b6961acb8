import { describe, expect, test } from 'vitest'
import { allowedHostKeys, allowedOrigins, hostKey, isLoopbackHost, parseAllowedHost, parseOrigin } from './names.js'

describe('Host and Origin names', () => {
  test('a Host header becomes hostname:port in lowercase (no port is 80); anything else is malformed', () => {
    expect(hostKey('LocalHost:8080')).toBe('localhost:8080')
    expect(hostKey('example.com')).toBe('example.com:80')
    expect(hostKey('[::1]:3000')).toBe('[::1]:3000')
    expect(hostKey('[::1]')).toBe('[::1]:80')
    for (const bad of [
      '',
      ':80',
      'a:b',
      'a:80:80',
      '::1',
      '[::1',
      '[nope]:80',
      'a..b',
      'a b',
      'a:99999',
      'a:80@evil',
      'a/b',
      'a.',
    ])
      expect(hostKey(bad), bad).toBeUndefined()
  })

  test('loopback binds are 127.0.0.1, ::1 and localhost only', () => {
    for (const host of ['127.0.0.1', '::1', '[::1]', 'localhost', 'LOCALHOST']) expect(isLoopbackHost(host)).toBe(true)
    for (const host of ['0.0.0.0', '::', '127.0.0.2', 'localhost.example', '192.168.1.2'])
      expect(isLoopbackHost(host)).toBe(false)
  })

  test('allowed Host names: loopback names on loopback, the bind on other addresses, plus --allow-host with the bound port by default', () => {
    expect([...allowedHostKeys({ host: '127.0.0.1', address: '127.0.0.1', port: 9, extra: [] })].sort()).toEqual([
      '127.0.0.1:9',
      '[::1]:9',
      'localhost:9',
    ])
    const other = allowedHostKeys({
      host: '192.168.1.2',
      address: '192.168.1.2',
      port: 9,
      extra: [{ hostname: 'mcp.example' }, { hostname: 'proxy.example', port: 443 }],
    })
    expect([...other].sort()).toEqual(['192.168.1.2:9', 'mcp.example:9', 'proxy.example:443'])
    const wide = allowedHostKeys({ host: '0.0.0.0', address: '0.0.0.0', port: 9, extra: [] })
    expect(wide.has('127.0.0.1:9') && wide.has('localhost:9')).toBe(true)
    expect(wide.has('evil.example:9')).toBe(false)
    expect(parseAllowedHost('::1')).toEqual({ hostname: '[::1]' })
    expect(parseAllowedHost('http://x')).toBeUndefined()
  })

  test('origins are normalized; paths, credentials and other schemes are not origins', () => {
    expect(parseOrigin('HTTPS://App.Example:443')).toBe('https://app.example')
    expect(parseOrigin('http://localhost:8080/')).toBe('http://localhost:8080')
    for (const bad of [
      'null',
      'app.example',
      'file:///x',
      'https://a.example/path',
      'https://u:p@a.example',
      'https://a.example?q',
    ])
      expect(parseOrigin(bad), bad).toBeUndefined()
    expect([...allowedOrigins(80, ['https://app.example'])].sort()).toEqual([
      'http://127.0.0.1',
      'http://[::1]',
      'http://localhost',
      'https://app.example',
    ])
  })
})
