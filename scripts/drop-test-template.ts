// Drops the PostgreSQL template of a test run (test/support/databases.ts) from a server that is
// not the run's throwaway one; scripts/test.sh runs it when the tests end.
import { dropPostgresTemplate } from '../test/support/databases.ts';

await dropPostgresTemplate();
