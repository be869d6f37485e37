/**
 * How a records table opens (RecordList) and so the first page main.ts asks for before the console has
 * loaded: the same sort and page size, and the query string the data provider builds for them.
 */
export const FIRST_PAGE = {
  sort: { field: 'createdAt', order: 'DESC' as const },
  perPage: 25,
  query: 'limit=25&sort=-createdAt',
};
