-- The schema exactly as the server's initialize() creates it (dist/index.js
-- DatabaseManager.initialize), with its four indexes, so starting the server
-- changes nothing.
CREATE TABLE entities (
  name TEXT PRIMARY KEY,
  entity_type TEXT NOT NULL,
  created_at DATETIME DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE observations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  entity_name TEXT NOT NULL,
  content TEXT NOT NULL,
  created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
  FOREIGN KEY (entity_name) REFERENCES entities(name)
);
CREATE TABLE relations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  source TEXT NOT NULL,
  target TEXT NOT NULL,
  relation_type TEXT NOT NULL,
  created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
  FOREIGN KEY (source) REFERENCES entities(name),
  FOREIGN KEY (target) REFERENCES entities(name)
);
CREATE INDEX idx_entities_name ON entities(name);
CREATE INDEX idx_observations_entity ON observations(entity_name);
CREATE INDEX idx_relations_source ON relations(source);
CREATE INDEX idx_relations_target ON relations(target);
INSERT INTO entities (name, entity_type, created_at) VALUES ('alice', 'person', '2026-11-01 09:00:00');
INSERT INTO entities (name, entity_type, created_at) VALUES ('carol', 'person', '2026-11-01 09:00:00');
INSERT INTO entities (name, entity_type, created_at) VALUES ('verity', 'project', '2026-11-01 09:00:00');
INSERT INTO observations (entity_name, content, created_at) VALUES ('alice', 'likes tea', '2026-11-01 09:00:00');
INSERT INTO observations (entity_name, content, created_at) VALUES ('alice', 'works on verity', '2026-11-01 09:00:00');
INSERT INTO observations (entity_name, content, created_at) VALUES ('carol', 'plays chess', '2026-11-01 09:00:00');
INSERT INTO observations (entity_name, content, created_at) VALUES ('verity', 'audits MCP servers', '2026-11-01 09:00:00');
INSERT INTO relations (source, target, relation_type, created_at) VALUES ('alice', 'verity', 'works_on', '2026-11-01 09:00:00');
INSERT INTO relations (source, target, relation_type, created_at) VALUES ('alice', 'carol', 'knows', '2026-11-01 09:00:00');
