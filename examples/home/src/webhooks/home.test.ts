import { describe, expect, it } from 'vitest';
import { type Home, homeSample } from '../api/ajd/v1/home.js';
import { admit } from '../testing/admission.js';
import { homeDefaulter, homeValidator } from './home.js';

// The sample of config/samples is what each test starts from (the reviews' user is "test").
describe('the Home webhooks', () => {
  it('defaults the owner to the user, each room to the ground floor, the floors to what the rooms need', async () => {
    const answer = await admit(homeDefaulter, 'CREATE', homeSample);
    expect(answer.allowed).toBe(true);
    expect(answer.object?.spec).toEqual({
      owner: 'test',
      floors: 2,
      rooms: [
        { name: 'kitchen', floor: 0, area: 12 },
        { name: 'living-room', floor: 0, area: 30 },
        { name: 'bedroom', floor: 1, area: 15 },
      ],
    });
  });

  it('keeps the old owner on an update that leaves it out', async () => {
    const old: Home = { ...homeSample, spec: { ...homeSample.spec, owner: 'alice' } };
    const answer = await admit(homeDefaulter, 'UPDATE', homeSample, old);
    expect(answer.object?.spec.owner).toBe('alice');
  });

  it('admits the sample and refuses a room named twice or above the floors, with field errors', async () => {
    expect((await admit(homeValidator, 'CREATE', homeSample)).allowed).toBe(true);
    const refused = await admit(homeValidator, 'CREATE', {
      ...homeSample,
      spec: {
        floors: 1,
        rooms: [
          { name: 'a', area: 1 },
          { name: 'a', floor: 1, area: 1 },
        ],
      },
    });
    expect(refused.allowed).toBe(false);
    expect(refused.message).toBe(
      'Home.ajd.my.domain "home-sample" is invalid: [spec.rooms[1].name: Duplicate value: "a", spec.rooms[1].floor: Invalid value: 1: must be below spec.floors (1)]',
    );
  });

  it('warns of a room without an area', async () => {
    const answer = await admit(homeValidator, 'CREATE', {
      ...homeSample,
      spec: { rooms: [{ name: 'hall' }] },
    });
    expect(answer).toMatchObject({
      allowed: true,
      warnings: ['room "hall" has no area: status.area leaves it out'],
    });
  });

  it('refuses a change of owner, and the deletion of a locked Home', async () => {
    const owned: Home = { ...homeSample, spec: { ...homeSample.spec, owner: 'alice' } };
    const changed = await admit(
      homeValidator,
      'UPDATE',
      { ...owned, spec: { ...owned.spec, owner: 'bob' } },
      owned,
    );
    expect(changed.message).toContain('spec.owner: Invalid value: "bob": field is immutable');
    expect((await admit(homeValidator, 'DELETE', owned)).allowed).toBe(true);
    const locked = await admit(homeValidator, 'DELETE', { ...owned, spec: { ...owned.spec, locked: true } });
    expect(locked.message).toContain(
      'spec.locked: Forbidden: a locked Home cannot be deleted: unlock it first',
    );
  });
  // +kubeloop:scaffold:tests
});
