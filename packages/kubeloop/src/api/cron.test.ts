import { describe, expect, it } from 'vitest';
import { cronScheduleError, parseSchedule, rfc3339In, ScheduleError } from './cron.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

describe('cron schedules', () => {
  it('gives the next matching minute, strictly after the time', () => {
    const s = parseSchedule('*/15 * * * *');
    expect(iso(s.next(at('2026-03-01T10:00:00Z')))).toBe('2026-03-01T10:15:00.000Z');
    expect(iso(s.next(at('2026-03-01T10:14:59Z')))).toBe('2026-03-01T10:15:00.000Z');
    expect(iso(s.next(at('2026-03-01T23:59:00Z')))).toBe('2026-03-02T00:00:00.000Z');
  });

  it('reads macros, names, ranges, lists and steps', () => {
    expect(iso(parseSchedule('@hourly').next(at('2026-03-01T10:30:00Z')))).toBe('2026-03-01T11:00:00.000Z');
    expect(iso(parseSchedule('@daily').next(at('2026-03-01T10:30:00Z')))).toBe('2026-03-02T00:00:00.000Z');
    expect(iso(parseSchedule('@weekly').next(at('2026-03-04T10:30:00Z')))).toBe('2026-03-08T00:00:00.000Z');
    expect(iso(parseSchedule('@monthly').next(at('2026-03-04T10:30:00Z')))).toBe('2026-04-01T00:00:00.000Z');
    expect(iso(parseSchedule('@yearly').next(at('2026-03-04T10:30:00Z')))).toBe('2027-01-01T00:00:00.000Z');
    expect(iso(parseSchedule('30 9 * JAN-MAR MON-FRI').next(at('2026-03-06T10:00:00Z')))).toBe(
      '2026-03-09T09:30:00.000Z',
    );
    expect(iso(parseSchedule('0 8,20 * * *').next(at('2026-03-01T09:00:00Z')))).toBe(
      '2026-03-01T20:00:00.000Z',
    );
    expect(iso(parseSchedule('5/20 * * * *').next(at('2026-03-01T09:30:00Z')))).toBe(
      '2026-03-01T09:45:00.000Z',
    );
  });

  it('matches day of month or day of week when both are restricted, both when one is a star', () => {
    // The 13th, or any Friday.
    expect(iso(parseSchedule('0 0 13 * 5').next(at('2026-03-01T00:00:00Z')))).toBe(
      '2026-03-06T00:00:00.000Z',
    );
    // Fridays only.
    expect(iso(parseSchedule('0 0 * * 5').next(at('2026-03-07T00:00:00Z')))).toBe('2026-03-13T00:00:00.000Z');
  });

  it('reads the fields in a CRON_TZ zone, across a daylight saving change', () => {
    const s = parseSchedule('CRON_TZ=America/New_York 0 6 * * *');
    expect(s.timeZone).toBe('America/New_York');
    // EST (UTC-5), then EDT (UTC-4) after 8 March 2026.
    expect(iso(s.next(at('2026-03-07T12:00:00Z')))).toBe('2026-03-08T10:00:00.000Z');
    expect(iso(s.next(at('2026-03-06T12:00:00Z')))).toBe('2026-03-07T11:00:00.000Z');
    expect(rfc3339In(at('2026-03-08T10:00:00Z'), 'America/New_York')).toBe('2026-03-08T06:00:00-04:00');
    expect(rfc3339In(at('2026-03-08T10:00:00Z'), 'Asia/Tokyo')).toBe('2026-03-08T19:00:00+09:00');
    expect(rfc3339In(at('2026-03-08T10:00:00Z'), 'UTC')).toBe('2026-03-08T10:00:00Z');
  });

  it('refuses what robfig/cron refuses', () => {
    expect(() => parseSchedule('* * * *')).toThrow(ScheduleError);
    expect(() => parseSchedule('61 * * * *')).toThrow('end of range (61) above maximum (59): 61');
    expect(() => parseSchedule('@fortnightly')).toThrow('unrecognized descriptor: @fortnightly');
    expect(() => parseSchedule('CRON_TZ=Mars/Olympus * * * * *')).toThrow(ScheduleError);
    expect(() => parseSchedule('*/0 * * * *')).toThrow(ScheduleError);
  });
});

describe('one parser for validation and scheduling', () => {
  it('validates what it schedules, with the same errors', () => {
    for (const spec of [
      '*/15 * * * *',
      '30 9 * JAN-MAR MON-FRI',
      '@hourly',
      'CRON_TZ=Asia/Tokyo 0 6 * * *',
    ]) {
      expect(cronScheduleError(spec), spec).toBeUndefined();
      expect(parseSchedule(spec).next(at('2026-03-01T00:00:00Z')), spec).toBeTypeOf('number');
    }
    expect(cronScheduleError('61 * * * *')).toBe('end of range (61) above maximum (59): 61');
    expect(() => parseSchedule('61 * * * *')).toThrow('end of range (61) above maximum (59): 61');
  });

  it('accepts @every in validation but computes no minute times for it', () => {
    expect(cronScheduleError('@every 5m')).toBeUndefined();
    expect(() => parseSchedule('@every 5m')).toThrow('unrecognized descriptor: @every 5m');
  });
});
