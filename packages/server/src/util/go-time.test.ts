import { describe, expect, it } from 'vitest';
import { goParseTimeError, RFC3339, RFC3339_MICRO } from './go-time.js';

// Go's time.Parse answers (go1.23, the toolchain of kube-apiserver 1.32), for metav1.Time's and
// metav1.MicroTime's layouts; most also measured against kube-apiserver (create a Lease or Event).
const at = (layout: string, value: string, rest: string, element: string) =>
  `parsing time "${value}" as "${layout}": cannot parse "${rest}" as "${element}"`;

describe('metav1.MicroTime (RFC3339Micro)', () => {
  const micro = (v: string) => goParseTimeError(RFC3339_MICRO, v);
  it('takes exactly six digits of a second, or a comma', () => {
    expect(micro('2026-01-01T00:00:00.000000Z')).toBeUndefined();
    expect(micro('2026-01-01T00:00:00,123456+02:00')).toBeUndefined();
    expect(micro('2026-01-01T00:00:00Z')).toBe(at(RFC3339_MICRO, '2026-01-01T00:00:00Z', 'Z', '.000000'));
    expect(micro('2026-01-01T00:00:00.5Z')).toBe(
      at(RFC3339_MICRO, '2026-01-01T00:00:00.5Z', '.5Z', '.000000'),
    );
    expect(micro('2026-01-01T00:00:00.1234567Z')).toBe(
      at(RFC3339_MICRO, '2026-01-01T00:00:00.1234567Z', '7Z', 'Z07:00'),
    );
  });
  it('words range errors and what it could not parse', () => {
    expect(micro('2026-13-01T00:00:00.000000Z')).toBe(
      'parsing time "2026-13-01T00:00:00.000000Z": month out of range',
    );
    expect(micro('2026-02-30T00:00:00.000000Z')).toBe(
      'parsing time "2026-02-30T00:00:00.000000Z": day out of range',
    );
    expect(micro('2024-02-29T00:00:00.000000Z')).toBeUndefined();
    expect(micro('2026-01-01T24:00:00.000000Z')).toBe(
      'parsing time "2026-01-01T24:00:00.000000Z": hour out of range',
    );
    expect(micro('2026-01-01T00:00:60.000000Z')).toBe(
      'parsing time "2026-01-01T00:00:60.000000Z": second out of range',
    );
    expect(micro('2026-01-01T00:00:00.000000+25:00')).toBe(
      'parsing time "2026-01-01T00:00:00.000000+25:00": time zone offset hour out of range',
    );
    expect(micro('2026-1-01T00:00:00.000000Z')).toBe(
      at(RFC3339_MICRO, '2026-1-01T00:00:00.000000Z', '1-01T00:00:00.000000Z', '01'),
    );
    expect(micro('20a6-01-01T00:00:00.000000Z')).toBe(
      at(RFC3339_MICRO, '20a6-01-01T00:00:00.000000Z', '20a6-01-01T00:00:00.000000Z', '2006'),
    );
    expect(micro('2026-01-01 00:00:00.000000Z')).toBe(
      at(RFC3339_MICRO, '2026-01-01 00:00:00.000000Z', ' 00:00:00.000000Z', 'T'),
    );
    expect(micro('2026-01-01T00:00:00.000000+0100')).toBe(
      at(RFC3339_MICRO, '2026-01-01T00:00:00.000000+0100', '+0100', 'Z07:00'),
    );
    expect(micro('')).toBe(at(RFC3339_MICRO, '', '', '2006'));
    // Not printable ASCII is quoted byte by byte, as Go's time package quotes it.
    expect(micro('ü')).toBe(
      `parsing time "\\xc3\\xbc" as "${RFC3339_MICRO}": cannot parse "\\xc3\\xbc" as "2006"`,
    );
  });
});

describe('metav1.Time (RFC3339)', () => {
  const time = (v: string) => goParseTimeError(RFC3339, v);
  it('takes a fraction of a second the layout does not have, and a one-digit hour', () => {
    expect(time('2026-01-01T00:00:00Z')).toBeUndefined();
    expect(time('2026-01-01T00:00:00.5Z')).toBeUndefined();
    expect(time('2026-01-01T00:00:00.123456789-07:00')).toBeUndefined();
    expect(time('2026-01-01T1:00:00Z')).toBeUndefined();
    expect(time('yesterday')).toBe(at(RFC3339, 'yesterday', 'yesterday', '2006'));
    expect(time('2026-01-01T00:00:00.000000Zjunk')).toBe(
      'parsing time "2026-01-01T00:00:00.000000Zjunk": extra text: "junk"',
    );
  });
});
