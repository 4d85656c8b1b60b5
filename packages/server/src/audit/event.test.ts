/** The event's encodings: MicroTime, Go durations, source IPs, managed fields left out. */
import { describe, expect, it } from 'vitest';
import { encodeEvent, microTime, sourceIPs, withoutManagedFields } from './event.js';
import { goDuration } from './request.js';

describe('audit event encoding', () => {
  it('writes MicroTime with six fractional digits in UTC', () => {
    expect(microTime(Date.UTC(2024, 4, 1, 10, 0, 0, 123) * 1000 + 456)).toBe('2024-05-01T10:00:00.123456Z');
    expect(microTime(Date.UTC(2024, 4, 1) * 1000 + 7)).toBe('2024-05-01T00:00:00.000007Z');
  });

  it("writes durations as Go's time.Duration prints them", () => {
    expect(goDuration(999)).toBe('999µs');
    expect(goDuration(512_300)).toBe('512.3ms');
    expect(goDuration(600_000)).toBe('600ms');
    expect(goDuration(1_500_000)).toBe('1.5s');
    expect(goDuration(123_000_001)).toBe('2m3.000001s');
    expect(goDuration(3_600_000_000 + 1_000_000)).toBe('1h0m1s');
  });

  it('takes source IPs as utilnet.SourceIPs: the forwarded chain, X-Real-Ip once, the peer unless last', () => {
    expect(sourceIPs({}, '::ffff:127.0.0.1')).toEqual(['127.0.0.1']);
    expect(
      sourceIPs({ 'x-forwarded-for': '10.0.0.1, bogus, 10.0.0.2', 'x-real-ip': '10.0.0.1' }, '10.0.0.2'),
    ).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(sourceIPs({ 'x-real-ip': '10.0.0.9' }, '::1')).toEqual(['10.0.0.9', '::1']);
  });

  it('leaves out managed fields of an object and of each item of a list', () => {
    const obj = { metadata: { name: 'a', managedFields: [{}] } };
    expect(withoutManagedFields(obj)).toEqual({ metadata: { name: 'a' } });
    expect(withoutManagedFields({ items: [obj] })).toEqual({ items: [{ metadata: { name: 'a' } }] });
    expect(obj.metadata.managedFields).toHaveLength(1);
  });

  it('writes fields in the Go struct order, empty ones left out, annotations sorted', () => {
    const line = encodeEvent({
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: 'Metadata',
      auditID: 'id',
      stage: 'ResponseComplete',
      requestURI: '/api',
      verb: 'get',
      user: {},
      sourceIPs: [],
      objectRef: { subresource: '', name: 'n', resource: 'pods', apiVersion: 'v1', namespace: 'ns' },
      requestReceivedTimestamp: 't0',
      stageTimestamp: 't1',
      annotations: { b: '2', a: '1' },
    });
    expect(line).toBe(
      '{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"id","stage":"ResponseComplete","requestURI":"/api","verb":"get","user":{},"objectRef":{"resource":"pods","namespace":"ns","name":"n","apiVersion":"v1"},"requestReceivedTimestamp":"t0","stageTimestamp":"t1","annotations":{"a":"1","b":"2"}}\n',
    );
  });
});
