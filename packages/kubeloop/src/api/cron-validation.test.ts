import { describe, expect, it } from 'vitest';
import { cronScheduleError } from './cron.js';

describe('cronScheduleError (robfig/cron ParseStandard)', () => {
  it('accepts standard specs, names, steps and descriptors', () => {
    for (const spec of [
      '*/5 * * * *',
      '0 0 * * *',
      '0 9-17 * * mon-fri',
      '15,45 */2 1 jan,jul ?',
      '5/10 * * * *',
      '@hourly',
      '@every 1h30m',
      'CRON_TZ=Europe/Paris 0 8 * * *',
    ])
      expect(cronScheduleError(spec), spec).toBeUndefined();
  });

  it('gives robfig/cron’s errors', () => {
    expect(cronScheduleError('* * * *')).toBe('expected exactly 5 fields, found 4: [* * * *]');
    expect(cronScheduleError('60 * * * *')).toBe('end of range (60) above maximum (59): 60');
    expect(cronScheduleError('* * 0 * *')).toBe('beginning of range (0) below minimum (1): 0');
    expect(cronScheduleError('5-1 * * * *')).toBe('beginning of range (5) beyond end of range (1): 5-1');
    expect(cronScheduleError('1-2-3 * * * *')).toBe('too many hyphens: 1-2-3');
    expect(cronScheduleError('*/0 * * * *')).toBe('step of range should be a positive number: */0');
    expect(cronScheduleError('x * * * *')).toBe(
      'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax',
    );
    expect(cronScheduleError('* * * * 7')).toBe('end of range (7) above maximum (6): 7');
    expect(cronScheduleError('@often')).toBe('unrecognized descriptor: @often');
    expect(cronScheduleError('@every soon')).toBe(
      'failed to parse duration @every soon: time: invalid duration "soon"',
    );
  });
});
