import { describe, expect, it } from 'vitest';
import { withArticle } from './names.js';

describe('withArticle', () => {
  it('gives "an" before a vowel sound and "a" before a consonant sound', () => {
    expect(withArticle('EtcdCluster')).toBe('an EtcdCluster');
    expect(withArticle('Memcached')).toBe('a Memcached');
    expect(withArticle('IngressRoute', true)).toBe('An IngressRoute');
    expect(withArticle('UserProfile')).toBe('a UserProfile');
    expect(withArticle('UnitTest')).toBe('a UnitTest');
    expect(withArticle('OneShot')).toBe('a OneShot');
    expect(withArticle('HourlyJob')).toBe('an HourlyJob');
    expect(withArticle('SQLServer')).toBe('an SQLServer');
    expect(withArticle('Secret', true)).toBe('A Secret');
  });
});
