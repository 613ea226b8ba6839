// Schema migrations, applied in order; PRAGMA user_version records how many ran.
// Append a new entry to change the schema: never edit one that has shipped, because a
// database that already ran it will not run it again.
//
// Every list the API pages through has an index in its keyset order, so a page is an
// index range scan: events over (start_time, id) with and without a leading filter
// column, teams and players over id, player box rows over (event_id, player_id).

export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) STRICT;

  CREATE TABLE leagues (
    code  TEXT PRIMARY KEY,
    name  TEXT NOT NULL,
    sport TEXT NOT NULL
  ) STRICT;

  CREATE TABLE seasons (
    id               TEXT PRIMARY KEY,
    league           TEXT NOT NULL REFERENCES leagues(code),
    year             INTEGER NOT NULL,
    name             TEXT NOT NULL,
    start_date       TEXT NOT NULL,
    end_date         TEXT NOT NULL,
    status           TEXT NOT NULL,
    futures_event_id TEXT
  ) STRICT;
  CREATE INDEX seasons_year ON seasons(year, league, id);

  CREATE TABLE venues (
    id     TEXT PRIMARY KEY,
    name   TEXT NOT NULL,
    city   TEXT NOT NULL,
    indoor INTEGER NOT NULL
  ) STRICT;

  CREATE TABLE teams (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    abbreviation TEXT NOT NULL,
    league       TEXT NOT NULL REFERENCES leagues(code),
    conference   TEXT,
    division     TEXT,
    venue_id     TEXT REFERENCES venues(id)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX teams_league ON teams(league, id);

  CREATE TABLE players (
    id       TEXT PRIMARY KEY,
    name     TEXT NOT NULL,
    league   TEXT NOT NULL REFERENCES leagues(code),
    team_id  TEXT NOT NULL REFERENCES teams(id),
    position TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX players_league ON players(league, id);
  CREATE INDEX players_team ON players(team_id, id);

  CREATE TABLE events (
    id             TEXT PRIMARY KEY,
    league         TEXT NOT NULL REFERENCES leagues(code),
    home_team_id   TEXT REFERENCES teams(id),
    home_team_name TEXT,
    away_team_id   TEXT REFERENCES teams(id),
    away_team_name TEXT,
    start_time     INTEGER NOT NULL,
    status         TEXT NOT NULL,
    has_odds       INTEGER NOT NULL,
    venue_id       TEXT REFERENCES venues(id),
    season_year    INTEGER NOT NULL,
    context        TEXT NOT NULL,
    is_futures     INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX events_start ON events(start_time, id);
  CREATE INDEX events_league_start ON events(league, start_time, id);
  CREATE INDEX events_home_start ON events(home_team_id, start_time, id);
  CREATE INDEX events_away_start ON events(away_team_id, start_time, id);
  CREATE INDEX events_status_start ON events(status, start_time, id);

  CREATE TABLE team_box (
    event_id   TEXT NOT NULL REFERENCES events(id),
    team_id    TEXT NOT NULL REFERENCES teams(id),
    home_id    TEXT NOT NULL,
    away_id    TEXT NOT NULL,
    league     TEXT NOT NULL,
    home_score INTEGER NOT NULL,
    away_score INTEGER NOT NULL,
    result     INTEGER NOT NULL,
    stats      TEXT NOT NULL,
    PRIMARY KEY (event_id, team_id)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX team_box_team ON team_box(team_id, event_id);

  CREATE TABLE player_box (
    event_id  TEXT NOT NULL REFERENCES events(id),
    player_id TEXT NOT NULL REFERENCES players(id),
    team_id   TEXT NOT NULL REFERENCES teams(id),
    date      TEXT NOT NULL,
    data      TEXT NOT NULL,
    PRIMARY KEY (event_id, player_id)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX player_box_player ON player_box(player_id, event_id);
  CREATE INDEX player_box_team ON player_box(team_id, event_id, player_id);

  CREATE TABLE api_keys (
    id                    INTEGER PRIMARY KEY,
    key_hash              TEXT NOT NULL UNIQUE,
    plan                  TEXT NOT NULL,
    monthly_cap           INTEGER NOT NULL,
    rate_limit_per_minute INTEGER NOT NULL,
    created_at            INTEGER NOT NULL,
    revoked_at            INTEGER,
    last4                 TEXT NOT NULL,
    label                 TEXT NOT NULL
  ) STRICT;
  CREATE INDEX api_keys_last4 ON api_keys(last4);

  CREATE TABLE api_usage (
    key_hash TEXT NOT NULL REFERENCES api_keys(key_hash),
    month    TEXT NOT NULL,
    count    INTEGER NOT NULL,
    PRIMARY KEY (key_hash, month)
  ) STRICT, WITHOUT ROWID;
  `,
];
