package state

import "fmt"

// Dump returns every row of every table of the store, each table's rows
// in the order of its id index. It is how two stores are compared object
// by object: servers that applied the same log must hold equal dumps,
// whichever way the entries were grouped into transactions.
func (s *StateStore) Dump() (map[string][]interface{}, error) {
	txn := s.db.Txn(false)
	tables := s.db.DBSchema().Tables
	out := make(map[string][]interface{}, len(tables))
	for name := range tables {
		it, err := txn.Get(name, indexID)
		if err != nil {
			return nil, fmt.Errorf("reading table %q: %w", name, err)
		}
		var rows []interface{}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			rows = append(rows, raw)
		}
		out[name] = rows
	}
	return out, nil
}
