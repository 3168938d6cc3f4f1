// Package readytest starts the real servers that package ready's checks
// talk to.
//
// They are PostgreSQL, MariaDB, RabbitMQ and NATS (Redis comes from
// fleet/fleettest, Kafka from kfake, gRPC and HTTP from the tests
// themselves), each on a free loopback port in a temporary directory, with
// a user "app" whose password is Password, so that a test can also log in
// with a wrong one.
//
// The servers are slow to start (a second for NATS, several for
// PostgreSQL, MariaDB and RabbitMQ on a loaded machine), so a test binary
// starts each at most once, from TestMain or a sync.Once, and stops it when
// its tests end: Start* return a *Server that Stop stops, not a server tied
// to one test's cleanup.
//
// PostgreSQL refuses to run as root, and MariaDB wants to be told which
// user to run as: when the tests run as root, both run as the system user
// User, which Start* create with useradd when it is missing.
//
// Start*On start a server on a port chosen in advance, for the tests of a
// server that comes up while a wait is already polling that port. Gate is
// a cheaper stand-in, for the benchmarks: a port that refuses connections
// until Open, then forwards them to a server that is already up.
//
// PostgreSQL, MariaDB and RabbitMQ also speak TLS with a certificate for
// 127.0.0.1 that an authority made at test time signed (Server.CAFile).
package readytest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// User is the system user that PostgreSQL and MariaDB run as when the
// tests run as root.
const User = "again-test"

// Password is the password of the user "app" on every server.
const Password = "s3cret-pw"

// Database is the database (PostgreSQL, MariaDB) that "app" may use,
// holding one table, Table.
const (
	Database = "app"
	Table    = "items"
)

// Server is a running server process. Its methods are safe for concurrent
// use; Stop is idempotent.
type Server struct {
	// Name is the server's kind, for messages: "postgres", "mariadb"...
	Name string
	// Addr is the host:port the server listens on, on loopback.
	Addr string
	// Dir is the temporary directory holding its data and logs, removed
	// by Stop.
	Dir string
	// CAFile is the PEM file of the authority, made at test time, that
	// signed the certificate for 127.0.0.1 the server presents on TLS
	// connections (PostgreSQL's ssl=on, MariaDB's ssl-cert, RabbitMQ's
	// TLSAddr); empty for a server without TLS.
	CAFile string
	// TLSAddr is the host:port of RabbitMQ's TLS listener (amqps);
	// PostgreSQL and MariaDB speak TLS on Addr.
	TLSAddr string

	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has been waited for
	log     string        // the file its output goes to
	stopSig os.Signal
	after   func() // run by Stop once the process has ended
	promote func() error
	once    sync.Once
}

// Port is the port of Addr.
func (s *Server) Port() int {
	_, p, _ := net.SplitHostPort(s.Addr)
	n, _ := strconv.Atoi(p)
	return n
}

// Log returns what the server has written to its log so far, for a test's
// failure message.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

// Stop stops the server (its stop signal, then SIGKILL after 15 s) and
// removes its directory.
func (s *Server) Stop() {
	s.once.Do(func() {
		if s.exited != nil {
			// The whole process group: RabbitMQ's script runs the Erlang VM
			// as a child.
			_ = syscall.Kill(-s.cmd.Process.Pid, s.stopSig.(syscall.Signal))
			select {
			case <-s.exited:
			case <-time.After(15 * time.Second):
				_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
				<-s.exited
			}
		}
		if s.after != nil {
			s.after()
		}
		_ = os.RemoveAll(s.Dir)
	})
}

// errExited is a server that exited while starting: most often because
// its port, free a moment before, was taken meanwhile. Start* try again on
// another port.
var errExited = errors.New("exited while starting")

// retryPort calls start up to three times while the server exits early.
func retryPort(start func() (*Server, error)) (*Server, error) {
	for i := 0; ; i++ {
		s, err := start()
		if i == 2 || !errors.Is(err, errExited) {
			return s, err
		}
	}
}

// FreePort returns a loopback TCP port that nothing listened on a moment
// ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// runAs is the credential that servers refusing root run with, or nil when
// the tests do not run as root (the servers then run as the current user).
func runAs() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(User)
	if err != nil {
		out, aerr := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", User).CombinedOutput()
		if aerr != nil && !bytes.Contains(out, []byte("already exists")) {
			return nil, fmt.Errorf("readytest: creating the user %s: %v: %s", User, aerr, out)
		}
		if u, err = user.Lookup(User); err != nil {
			return nil, err
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// newDir makes a temporary directory that cred's user owns.
func newDir(name string, cred *syscall.Credential) (string, error) {
	dir, err := os.MkdirTemp("", "again-"+name+"-")
	if err != nil {
		return "", err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// command is exec.Command running as cred (when not nil), in its own
// process group.
func command(cred *syscall.Credential, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	return cmd
}

// run runs a setup command to its end and returns its output in the error.
func run(cmd *exec.Cmd) error {
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("readytest: %s: %v: %s", filepath.Base(cmd.Path), err, out)
	}
	return nil
}

// start starts cmd with its output in dir/log and waits until ready
// returns nil (every 50 ms, up to a minute: a loaded machine is slow).
func start(s *Server, cmd *exec.Cmd, ready func() error) error {
	s.log = filepath.Join(s.Dir, "server.log")
	f, err := os.Create(s.log)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("readytest: starting %s: %w", s.Name, err)
	}
	s.cmd = cmd
	s.exited = make(chan struct{})
	go func() { _ = cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(time.Minute)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			log := s.Log()
			s.Stop()
			return fmt.Errorf("readytest: %s %w: %v\n%s", s.Name, errExited, err, log)
		default:
		}
		if time.Now().After(deadline) {
			log := s.Log()
			s.Stop()
			return fmt.Errorf("readytest: %s on %s not ready within a minute: %v\n%s", s.Name, s.Addr, err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pgBin finds the directory of the PostgreSQL server binaries: $PGBIN, or
// the newest /usr/lib/postgresql/*/bin (Debian's layout).
func pgBin() (string, error) {
	if d := os.Getenv("PGBIN"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi < vj
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "postgres")); err == nil {
			return dirs[i], nil
		}
	}
	return "", errors.New("readytest: no PostgreSQL server under /usr/lib/postgresql/*/bin (apt-get install postgresql; or set PGBIN)")
}

// StartPostgres starts a PostgreSQL server on a free loopback port whose
// user "app" (password Password, scram-sha-256) owns the database
// Database, holding the table Table. The superuser "postgres" has the same
// password.
func StartPostgres() (*Server, error) {
	return retryPort(func() (*Server, error) { return startPostgres(0, false) })
}

// StartPostgresOn is StartPostgres on the given port, for a test that
// waits on the port before the server starts: one try, since the port is
// the caller's.
func StartPostgresOn(port int) (*Server, error) { return startPostgres(port, false) }

// StartPostgresStandby starts a PostgreSQL server on a free loopback port
// that stays in recovery, as a standby with no primary and hot_standby
// off, so that it answers every connection "the database system is not
// accepting connections" (SQLSTATE 57P03, as during start-up) until
// Promote. Only the superuser "postgres" (password Password) exists.
func StartPostgresStandby() (*Server, error) {
	return retryPort(func() (*Server, error) { return startPostgres(0, true) })
}

// Promote ends a standby's recovery (pg_ctl promote) and returns once it
// accepts connections.
func (s *Server) Promote() error {
	if s.promote == nil {
		return fmt.Errorf("readytest: %s is not a standby", s.Name)
	}
	return s.promote()
}

func startPostgres(port int, standby bool) (*Server, error) {
	bin, err := pgBin()
	if err != nil {
		return nil, err
	}
	cred, err := runAs()
	if err != nil {
		return nil, err
	}
	dir, err := newDir("postgres", cred)
	if err != nil {
		return nil, err
	}
	if port == 0 {
		if port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	s := &Server{Name: "postgres", Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir, stopSig: syscall.SIGINT}
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte(Password+"\n"), 0o644); err != nil {
		return nil, err
	}
	if s.CAFile, err = writeCerts(dir, cred); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := run(command(cred, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--pwfile", pw,
		"--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync", "--no-instructions", "-E", "UTF8", "--locale=C")); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	cmd := command(cred, filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "ssl=on", "-c", "ssl_cert_file="+filepath.Join(dir, certFile), "-c", "ssl_key_file="+filepath.Join(dir, keyFile))
	psql := func(db, sql string) error {
		return run(command(cred, filepath.Join(bin, "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1",
			"-h", dir, "-p", strconv.Itoa(port), "-U", "postgres", "-d", db, "-c", sql))
	}
	if standby {
		if err := os.WriteFile(filepath.Join(data, "standby.signal"), nil, 0o644); err != nil {
			return nil, err
		}
		cmd.Args = append(cmd.Args, "-c", "hot_standby=off")
		// Up means in recovery and refusing connections.
		inRecovery := func() error {
			err := psql("postgres", "SELECT 1")
			// PostgreSQL 14 and later say "not accepting connections",
			// earlier ones "starting up": both are SQLSTATE 57P03.
			if err != nil && (strings.Contains(err.Error(), "not accepting connections") || strings.Contains(err.Error(), "starting up")) {
				return nil
			}
			return fmt.Errorf("readytest: not a standby in recovery yet: %v", err)
		}
		if err := start(s, cmd, inRecovery); err != nil {
			return nil, err
		}
		s.promote = func() error {
			return run(command(cred, filepath.Join(bin, "pg_ctl"), "promote", "-D", data, "-w", "-t", "60"))
		}
		return s, nil
	}
	if err := start(s, cmd, func() error { return psql("postgres", "SELECT 1") }); err != nil {
		return nil, err
	}
	for _, step := range [][2]string{
		{"postgres", "CREATE USER app PASSWORD '" + Password + "'"},
		{"postgres", "CREATE DATABASE " + Database + " OWNER app"},
		{Database, "CREATE TABLE " + Table + " (id int); ALTER TABLE " + Table + " OWNER TO app"},
	} {
		if err := psql(step[0], step[1]); err != nil {
			s.Stop()
			return nil, err
		}
	}
	return s, nil
}

// StartMariaDB starts a MariaDB server on a free loopback port whose user
// "app"@"%" (password Password) may use the database Database, holding
// the table Table. It speaks TLS (ssl-cert) with a certificate that
// CAFile's authority signed.
func StartMariaDB() (*Server, error) {
	return retryPort(func() (*Server, error) { return startMariaDB(0) })
}

// StartMariaDBOn is StartMariaDB on the given port (see StartPostgresOn).
// The user "app" exists before the port accepts: a wait that is already
// polling never sees it refused.
func StartMariaDBOn(port int) (*Server, error) { return startMariaDB(port) }

func startMariaDB(port int) (*Server, error) {
	if _, err := exec.LookPath("mariadbd"); err != nil {
		return nil, errors.New("readytest: mariadbd is not installed (apt-get install mariadb-server)")
	}
	cred, err := runAs()
	if err != nil {
		return nil, err
	}
	dir, err := newDir("mariadb", cred)
	if err != nil {
		return nil, err
	}
	if port == 0 {
		if port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	s := &Server{Name: "mariadb", Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir, stopSig: syscall.SIGTERM}
	if s.CAFile, err = writeCerts(dir, cred); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	sock := filepath.Join(dir, "sock")
	userArg := "--user=" + currentUser()
	if cred != nil {
		userArg = "--user=" + User
	}
	if err := run(exec.Command("mariadb-install-db", "--no-defaults", "--datadir="+data, userArg,
		"--auth-root-authentication-method=normal", "--skip-test-db", "--tmpdir="+dir)); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	// The init file runs before the server listens, so that "app" exists
	// from the first connection a waiter makes.
	initFile := filepath.Join(dir, "init.sql")
	initSQL := "CREATE DATABASE IF NOT EXISTS " + Database + ";\n" +
		"CREATE USER IF NOT EXISTS 'app'@'%' IDENTIFIED BY '" + Password + "';\n" +
		"GRANT ALL ON " + Database + ".* TO 'app'@'%';\n" +
		"CREATE TABLE IF NOT EXISTS " + Database + "." + Table + " (id int);\n"
	if err := os.WriteFile(initFile, []byte(initSQL), 0o644); err != nil {
		return nil, err
	}
	cmd := command(nil, "mariadbd", "--no-defaults", "--datadir="+data, "--port="+strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--socket="+sock, "--tmpdir="+dir, "--pid-file="+filepath.Join(dir, "pid"), userArg,
		"--skip-log-bin", "--innodb-buffer-pool-size=16M", "--innodb-log-file-size=8M", "--skip-name-resolve",
		"--innodb-flush-log-at-trx-commit=0", "--init-file="+initFile,
		"--ssl-ca="+s.CAFile, "--ssl-cert="+filepath.Join(dir, certFile), "--ssl-key="+filepath.Join(dir, keyFile))
	client := func(sql string) error {
		return run(exec.Command("mariadb", "--no-defaults", "--socket="+sock, "-u", "root", "-e", sql))
	}
	if err := start(s, cmd, func() error { return client("SELECT 1 FROM " + Database + "." + Table) }); err != nil {
		return nil, err
	}
	return s, nil
}

func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "root"
}

// StartNATS starts a NATS server on a free loopback port that accepts the
// user "app" with the password Password.
func StartNATS() (*Server, error) { return retryPort(func() (*Server, error) { return startNATS(0) }) }

// StartNATSOn is StartNATS on the given port (see StartPostgresOn).
func StartNATSOn(port int) (*Server, error) { return startNATS(port) }

// StartNATSTLS is StartNATS for a server that requires TLS, with a
// certificate for 127.0.0.1 that CAFile's authority signed: a client
// learns it from the server's greeting and upgrades the connection.
func StartNATSTLS() (*Server, error) {
	return retryPort(func() (*Server, error) { return startNATSServer(0, true) })
}

func startNATS(port int) (*Server, error) { return startNATSServer(port, false) }

func startNATSServer(port int, withTLS bool) (*Server, error) {
	if _, err := exec.LookPath("nats-server"); err != nil {
		return nil, errors.New("readytest: nats-server is not installed (apt-get install nats-server)")
	}
	dir, err := newDir("nats", nil)
	if err != nil {
		return nil, err
	}
	if port == 0 {
		if port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	s := &Server{Name: "nats", Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir, stopSig: syscall.SIGTERM}
	args := []string{"-a", "127.0.0.1", "-p", strconv.Itoa(port), "--user", "app", "--pass", Password}
	if withTLS {
		if s.CAFile, err = writeCerts(dir, nil); err != nil {
			return nil, err
		}
		args = append(args, "--tls", "--tlscert", filepath.Join(dir, certFile), "--tlskey", filepath.Join(dir, keyFile))
	}
	cmd := command(nil, "nats-server", args...)
	// The greeting (INFO) comes in the clear, TLS or not.
	if err := start(s, cmd, func() error { return greets(s.Addr, "INFO") }); err != nil {
		return nil, err
	}
	return s, nil
}

// greets dials addr and checks that the server's first bytes start with
// prefix.
func greets(addr, prefix string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	buf := make([]byte, len(prefix))
	if _, err := io.ReadFull(c, buf); err != nil {
		return err
	}
	if string(buf) != prefix {
		return fmt.Errorf("readytest: %s greets with %q", addr, buf)
	}
	return nil
}

// StartRabbitMQ starts a RabbitMQ node on a free loopback port (and a TLS
// listener on TLSAddr, with a certificate that CAFile's authority signed), with its
// own Erlang port mapper (epmd) on another, so that it shares nothing with
// a node of the machine. The user "app" (password Password) may use the
// vhost "/". ready reports when the AMQP port accepts a connection (the
// caller's check is the real test); RabbitMQ takes seconds to start.
func StartRabbitMQ(ready func(addr string) error) (*Server, error) {
	return retryPort(func() (*Server, error) { return startRabbitMQ(0, ready) })
}

// StartRabbitMQOn is StartRabbitMQ with its AMQP port given (see
// StartPostgresOn). The user "app" comes from definitions loaded before
// the listeners start.
func StartRabbitMQOn(port int, ready func(addr string) error) (*Server, error) {
	return startRabbitMQ(port, ready)
}

func startRabbitMQ(port int, ready func(addr string) error) (*Server, error) {
	script := "/usr/lib/rabbitmq/bin/rabbitmq-server"
	if _, err := os.Stat(script); err != nil {
		return nil, errors.New("readytest: RabbitMQ is not installed (apt-get install rabbitmq-server)")
	}
	dir, err := newDir("rabbitmq", nil)
	if err != nil {
		return nil, err
	}
	var ports [4]int
	for i := range ports {
		if ports[i], err = FreePort(); err != nil {
			return nil, err
		}
	}
	if port == 0 {
		port = ports[0]
	}
	dist, epmd, tlsPort := ports[1], ports[2], ports[3]
	s := &Server{Name: "rabbitmq", Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir, stopSig: syscall.SIGTERM,
		TLSAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(tlsPort))}
	if s.CAFile, err = writeCerts(dir, nil); err != nil {
		return nil, err
	}
	// The definitions file creates the user at boot: rabbitmqctl would cost
	// an Erlang VM's start per call.
	hash := rabbitHash(Password)
	defs := `{"users":[{"name":"app","password_hash":"` + hash + `","hashing_algorithm":"rabbit_password_hashing_sha256","tags":["administrator"]}],` +
		`"vhosts":[{"name":"/"}],"permissions":[{"user":"app","vhost":"/","configure":".*","write":".*","read":".*"}]}`
	conf := "loopback_users = none\nlisteners.tcp.1 = 127.0.0.1:" + strconv.Itoa(port) + "\n" +
		"load_definitions = " + filepath.Join(dir, "defs.json") + "\n" +
		"management_agent.disable_metrics_collector = true\n" +
		"listeners.ssl.1 = " + s.TLSAddr + "\n" +
		"ssl_options.cacertfile = " + s.CAFile + "\n" +
		"ssl_options.certfile = " + filepath.Join(dir, certFile) + "\n" +
		"ssl_options.keyfile = " + filepath.Join(dir, keyFile) + "\n" +
		"ssl_options.verify = verify_none\n" +
		"ssl_options.fail_if_no_peer_cert = false\n"
	for name, text := range map[string]string{"defs.json": defs, "rabbitmq.conf": conf, "enabled_plugins": "[].\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	node := "again" + strconv.Itoa(port) + "@localhost"
	cmd := command(nil, script)
	cmd.Env = append(os.Environ(),
		"HOME="+dir,
		"RABBITMQ_NODENAME="+node,
		"RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODE_PORT="+strconv.Itoa(port),
		"RABBITMQ_DIST_PORT="+strconv.Itoa(dist),
		"ERL_EPMD_PORT="+strconv.Itoa(epmd),
		"ERL_EPMD_ADDRESS=127.0.0.1",
		"RABBITMQ_BASE="+dir,
		"RABBITMQ_MNESIA_BASE="+filepath.Join(dir, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(dir, "log"),
		"RABBITMQ_LOGS=-",
		"RABBITMQ_CONFIG_FILE="+filepath.Join(dir, "rabbitmq.conf"),
		"RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(dir, "enabled_plugins"),
		"RABBITMQ_PID_FILE="+filepath.Join(dir, "pid"),
		"RABBITMQ_CONF_ENV_FILE="+filepath.Join(dir, "rabbitmq-env.conf"),
	)
	s.after = func() {
		// The port mapper daemonizes and outlives the node.
		kill := exec.Command("epmd", "-kill")
		kill.Env = append(os.Environ(), "ERL_EPMD_PORT="+strconv.Itoa(epmd))
		_ = kill.Run()
	}
	if err := start(s, cmd, func() error { return ready(s.Addr) }); err != nil {
		return nil, err
	}
	return s, nil
}

// Gate is a loopback port that refuses connections until Open, then
// forwards each to a target server: a server that "starts" while a wait
// is running, for the price of a listener. Its methods are safe for
// concurrent use.
type Gate struct {
	// Addr is the gate's host:port.
	Addr   string
	target string

	mu    sync.Mutex
	l     net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// NewGate reserves a free port that forwards to target once opened.
func NewGate(target string) (*Gate, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	return &Gate{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), target: target}, nil
}

// Open starts accepting connections and forwarding them.
func (g *Gate) Open() error {
	l, err := net.Listen("tcp", g.Addr)
	if err != nil {
		return err
	}
	g.mu.Lock()
	g.l = l
	g.mu.Unlock()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			g.mu.Lock()
			if g.conns == nil {
				g.conns = map[net.Conn]struct{}{}
			}
			g.conns[c] = struct{}{}
			g.mu.Unlock()
			g.wg.Add(1)
			go func() {
				defer g.wg.Done()
				forward(c, g.target)
				g.mu.Lock()
				delete(g.conns, c)
				g.mu.Unlock()
			}()
		}
	}()
	return nil
}

func forward(c net.Conn, target string) {
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var d net.Dialer
	t, err := d.DialContext(ctx, "tcp", target)
	if err != nil {
		return
	}
	defer t.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(t, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, t); done <- struct{}{} }()
	<-done
}

// Close stops accepting, closes the connections it forwards and waits for
// its goroutines to end.
func (g *Gate) Close() {
	g.mu.Lock()
	if g.l != nil {
		_ = g.l.Close()
	}
	for c := range g.conns {
		_ = c.Close()
	}
	g.mu.Unlock()
	g.wg.Wait()
}

// rabbitHash is RabbitMQ's rabbit_password_hashing_sha256 of password:
// base64(salt ‖ sha256(salt ‖ password)) with a 4-byte salt.
func rabbitHash(password string) string {
	salt := []byte{0x90, 0x8d, 0xc6, 0x0a}
	sum := sha256.Sum256(append(append([]byte{}, salt...), password...))
	return base64.StdEncoding.EncodeToString(append(salt, sum[:]...))
}

// StartRedisOn starts redis-server on the given loopback port, requiring
// the password Password and persisting nothing, for a test that waits on
// the port before the server starts (fleet/fleettest's servers choose
// their own port).
//
// args are more redis-server options, after the helper's own (a later
// option wins): "--dir" with an RDB file to load, for instance.
func StartRedisOn(port int, args ...string) (*Server, error) { return startRedis(port, "", args) }

// StartRedisTLSOn is StartRedisOn for a server that speaks only TLS
// (rediss://) on port, with the certificate that WriteCerts wrote in
// certDir: a test that waits before the server starts makes them first,
// to trust their authority.
func StartRedisTLSOn(port int, certDir string, args ...string) (*Server, error) {
	return startRedis(port, certDir, args)
}

func startRedis(port int, certDir string, args []string) (*Server, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, errors.New("readytest: redis-server is not installed (apt-get install redis-server)")
	}
	dir, err := newDir("redis", nil)
	if err != nil {
		return nil, err
	}
	s := &Server{Name: "redis", Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir, stopSig: syscall.SIGTERM}
	cmd := command(nil, "redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--requirepass", Password, "--save", "", "--appendonly", "no")
	if certDir != "" {
		s.CAFile = filepath.Join(certDir, caFile)
		cmd.Args = append(cmd.Args, "--port", "0", "--tls-port", strconv.Itoa(port), "--tls-auth-clients", "no",
			"--tls-ca-cert-file", s.CAFile, "--tls-cert-file", filepath.Join(certDir, certFile), "--tls-key-file", filepath.Join(certDir, keyFile))
	}
	cmd.Args = append(cmd.Args, args...)
	if err := start(s, cmd, func() error { return greets(s.Addr, "") }); err != nil {
		return nil, err
	}
	return s, nil
}
