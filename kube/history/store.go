package history

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// FileName is the store's file in the state directory.
const FileName = "history.db"

// DefaultPath is $XDG_STATE_HOME/raydar/history.db
// (~/.local/state/raydar/history.db), beside raydar's log and audit log.
// In a cluster the operator's Deployment sets XDG_STATE_HOME to its state
// volume (config/manager/manager.yaml).
func DefaultPath() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "raydar", FileName), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("history: no XDG_STATE_HOME and no home directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "raydar", FileName), nil
}

// StoreOptions bound a Store. Zero values take the defaults.
type StoreOptions struct {
	// MaxPerObject entries per object (default 500); the oldest go first.
	MaxPerObject int
	// MaxEntries in all (default 50000) and MaxBytes of their encoding
	// (default 16 MiB); past either the oldest entries go first.
	MaxEntries int
	MaxBytes   int64
	// LockTimeout is how long Open waits for another raydar holding the
	// file (default 1 s); then the store is kept in memory.
	LockTimeout time.Duration
}

// Defaults of StoreOptions.
const (
	DefaultMaxPerObject = 500
	DefaultMaxEntries   = 50000
	DefaultMaxBytes     = 16 << 20
	DefaultLockTimeout  = time.Second
)

func (o StoreOptions) withDefaults() StoreOptions {
	if o.MaxPerObject <= 0 {
		o.MaxPerObject = DefaultMaxPerObject
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	return o
}

// Store is the bounded timeline of every object: a bbolt file, or memory
// when the file cannot be had (Note says why). Safe for concurrent use.
//
// One process at a time writes a file: it holds the lock of PATH.lock (a
// bbolt file of its own, locked while the Store is open) and opens PATH
// itself only for each Append and Query, so that `raydar history` in
// another terminal (OpenReader) reads it while a TUI or an operator
// records.
type Store struct {
	opts     StoreOptions
	path     string
	lock     *bolt.DB // the writer's lock; nil for a reader or in memory
	onDisk   bool
	readOnly bool
	mem      *memStore
	// shared is the file another raydar on this machine records into
	// while this store keeps its own record in memory: Query shows both.
	shared string
	note   string
	mu     sync.Mutex // closed
	done   bool
}

// openTimeout bounds the wait for PATH itself (held only for a transaction
// by the writer or a reader).
const openTimeout = 10 * time.Second

var (
	bucketEntries = []byte("entries") // seq → objKey NUL JSON
	bucketObjects = []byte("objects") // objKey NUL seq → nil
	bucketCounts  = []byte("counts")  // objKey → count
	bucketMeta    = []byte("meta")    // "n", "bytes"
	keyN          = []byte("n")
	keyBytes      = []byte("bytes")
)

// Open opens (creating) the store at path for writing. When another
// raydar process writes it (it holds PATH.lock) past LockTimeout, or the
// file cannot be opened, the store is kept in memory for this process and
// Note says so; err is then nil, so that a second raydar on one state
// directory runs rather than hangs. err is returned only for path "".
func Open(path string, o StoreOptions) (*Store, error) {
	o = o.withDefaults()
	if path == "" {
		return nil, errors.New("history: no store path")
	}
	s := &Store{opts: o, path: path}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return s.inMemory(fmt.Sprintf("history kept in memory only: %v", err)), nil
	}
	lock, err := bolt.Open(path+".lock", 0o600, &bolt.Options{Timeout: o.LockTimeout})
	if errors.Is(err, bolt.ErrTimeout) {
		s = s.inMemory(fmt.Sprintf("history kept in memory only: %s is being recorded by another raydar on this machine (its record is shown too)", path))
		s.shared = path
		return s, nil
	}
	if err != nil {
		return s.inMemory(fmt.Sprintf("history kept in memory only: %s: %v", path, err)), nil
	}
	s.lock, s.onDisk = lock, true
	err = s.update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketEntries, bucketObjects, bucketCounts, bucketMeta} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		lock.Close()
		s.lock, s.onDisk = nil, false
		return s.inMemory(fmt.Sprintf("history kept in memory only: %s: %v", path, err)), nil
	}
	return s, nil
}

// ErrNoHistory is OpenReader's error when nothing was recorded at path.
var ErrNoHistory = errors.New("no history recorded on this machine yet")

// OpenReader opens the store at path to read it, beside the process that
// records into it.
func OpenReader(path string) (*Store, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNoHistory)
	} else if err != nil {
		return nil, err
	}
	return &Store{opts: StoreOptions{}.withDefaults(), path: path, onDisk: true, readOnly: true}, nil
}

// update runs fn in a write transaction on the file, opened for it.
func (s *Store) update(fn func(*bolt.Tx) error) error {
	db, err := bolt.Open(s.path, 0o600, &bolt.Options{Timeout: openTimeout})
	if err != nil {
		return fmt.Errorf("history: %s: %w", s.path, err)
	}
	if err := db.Update(fn); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

// view runs fn in a read transaction on the file, opened read-only for it.
func (s *Store) view(fn func(*bolt.Tx) error) error {
	db, err := bolt.Open(s.path, 0o600, &bolt.Options{Timeout: openTimeout, ReadOnly: true})
	if err != nil {
		return fmt.Errorf("history: %s: %w", s.path, err)
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketEntries) == nil || tx.Bucket(bucketObjects) == nil || tx.Bucket(bucketMeta) == nil {
			return ErrNoHistory
		}
		return fn(tx)
	})
}

// Memory is a store kept in memory (tests, --history-file "").
func Memory(o StoreOptions, note string) *Store {
	s := &Store{opts: o.withDefaults()}
	return s.inMemory(note)
}

func (s *Store) inMemory(note string) *Store {
	s.mem, s.note = newMemStore(s.opts), note
	return s
}

// Note is "" for a store on disk, else why it is in memory.
func (s *Store) Note() string { return s.note }

// Path is the file, "" in memory.
func (s *Store) Path() string {
	if !s.onDisk {
		return ""
	}
	return s.path
}

// ErrClosed is returned by a closed Store.
var ErrClosed = errors.New("history: store closed")

// Close closes the file (releasing its lock).
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil
	}
	s.done = true
	if s.lock != nil {
		return s.lock.Close()
	}
	return nil
}

func (s *Store) closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// Append adds entries, in one transaction, dropping the oldest past the
// bounds.
func (s *Store) Append(entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	if s.closed() {
		return ErrClosed
	}
	if !s.onDisk {
		s.mem.append(entries)
		return nil
	}
	if s.readOnly {
		return errors.New("history: a reader does not append")
	}
	return s.update(func(tx *bolt.Tx) error {
		eb, ob, cb, mb := tx.Bucket(bucketEntries), tx.Bucket(bucketObjects), tx.Bucket(bucketCounts), tx.Bucket(bucketMeta)
		n, size := getU64(mb, keyN), getU64(mb, keyBytes)
		for i := range entries {
			js, err := json.Marshal(&entries[i])
			if err != nil {
				return err
			}
			obj := []byte(entries[i].key())
			prefix := indexKey(obj, nil)
			seq, err := eb.NextSequence()
			if err != nil {
				return err
			}
			sk := u64(seq)
			val := append(append(append(make([]byte, 0, len(obj)+1+len(js)), obj...), 0), js...)
			if err := eb.Put(sk, val); err != nil {
				return err
			}
			if err := ob.Put(indexKey(obj, sk), nil); err != nil {
				return err
			}
			c := getU64(cb, obj) + 1
			n, size = n+1, size+uint64(len(val))
			for ; c > uint64(s.opts.MaxPerObject); c-- {
				k, _ := ob.Cursor().Seek(prefix)
				if k == nil || !bytes.HasPrefix(k, prefix) {
					break
				}
				k = append([]byte(nil), k...)
				oldSeq := k[len(prefix):]
				size -= uint64(len(eb.Get(oldSeq)))
				n--
				if err := eb.Delete(oldSeq); err != nil {
					return err
				}
				if err := ob.Delete(k); err != nil {
					return err
				}
			}
			if err := putU64(cb, obj, c); err != nil {
				return err
			}
		}
		for cur := eb.Cursor(); n > uint64(s.opts.MaxEntries) || size > uint64(s.opts.MaxBytes); {
			k, v := cur.First()
			if k == nil {
				n, size = 0, 0
				break
			}
			obj, _, _ := bytes.Cut(v, []byte{0})
			obj = append([]byte(nil), obj...)
			n, size = n-1, size-uint64(len(v))
			ik := indexKey(obj, append([]byte(nil), k...))
			if err := cur.Delete(); err != nil {
				return err
			}
			if err := ob.Delete(ik); err != nil {
				return err
			}
			if c := getU64(cb, obj); c <= 1 {
				if err := cb.Delete(obj); err != nil {
					return err
				}
			} else if err := putU64(cb, obj, c-1); err != nil {
				return err
			}
		}
		if err := putU64(mb, keyN, n); err != nil {
			return err
		}
		return putU64(mb, keyBytes, size)
	})
}

// Query is the timeline of one object (server, kind, namespace, name; the
// UID of ref is not matched), oldest first, of entries at or after since (all
// when zero).
func (s *Store) Query(ref Ref, since time.Time) ([]Entry, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	if !s.onDisk {
		own := s.mem.query(ref.key(), since)
		if s.shared == "" {
			return own, nil
		}
		theirs, err := (&Store{opts: s.opts, path: s.shared, onDisk: true, readOnly: true}).Query(ref, since)
		if err != nil && !errors.Is(err, ErrNoHistory) {
			return own, err
		}
		return merge(theirs, own), nil
	}
	var out []Entry
	err := s.view(func(tx *bolt.Tx) error {
		eb, ob := tx.Bucket(bucketEntries), tx.Bucket(bucketObjects)
		prefix := append([]byte(ref.key()), 0)
		c := ob.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			v := eb.Get(k[len(prefix):])
			_, js, ok := bytes.Cut(v, []byte{0})
			if !ok {
				continue
			}
			var e Entry
			if err := json.Unmarshal(js, &e); err != nil {
				return fmt.Errorf("history: entry %x of %s: %w", k[len(prefix):], ref.key(), err)
			}
			if !since.IsZero() && e.Time.Before(since) {
				continue
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

// Stats are the store's totals.
type Stats struct {
	Entries int   `json:"entries"`
	Bytes   int64 `json:"bytes"`
}

// Stats counts the entries kept and the bytes of their encoding.
func (s *Store) Stats() (Stats, error) {
	if s.closed() {
		return Stats{}, ErrClosed
	}
	if !s.onDisk {
		return s.mem.stats(), nil
	}
	var st Stats
	err := s.view(func(tx *bolt.Tx) error {
		mb := tx.Bucket(bucketMeta)
		st = Stats{Entries: int(getU64(mb, keyN)), Bytes: int64(getU64(mb, keyBytes))}
		return nil
	})
	return st, err
}

func indexKey(obj, seq []byte) []byte {
	return append(append(append(make([]byte, 0, len(obj)+1+len(seq)), obj...), 0), seq...)
}

func u64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

func getU64(b *bolt.Bucket, k []byte) uint64 {
	v := b.Get(k)
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

func putU64(b *bolt.Bucket, k []byte, v uint64) error { return b.Put(k, u64(v)) }

// sameChangeWithin is how far apart two processes may stamp one change
// they both saw (each stamps what its own informer delivers).
const sameChangeWithin = 10 * time.Second

// merge is the file's timeline (another raydar's record) with the entries
// of this process's own that the file does not have (the same change of
// the same object seen by both within sameChangeWithin is one), oldest
// first.
func merge(file, own []Entry) []Entry {
	out := append([]Entry(nil), file...)
	for _, e := range own {
		dup := false
		for _, f := range file {
			if f.UID == e.UID && f.What == e.What && f.Subject == e.Subject && f.From == e.From && f.To == e.To &&
				e.Time.Sub(f.Time).Abs() <= sameChangeWithin {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}
