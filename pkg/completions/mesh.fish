# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_mesh_global_optspecs
    string join \n inventory= catalogue= json q/quiet v/verbose h/help V/version
end

function __fish_mesh_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_mesh_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_mesh_using_subcommand
    set -l cmd (__fish_mesh_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c mesh -n "__fish_mesh_needs_command" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_needs_command" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_needs_command" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_needs_command" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_needs_command" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_needs_command" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_needs_command" -s V -l version -d 'Print version'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "init" -d 'Create the inventory file, remembering the catalogue folders given (--catalogue)'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "catalogue" -d 'The catalogue folders the inventory remembers: add, remove, list'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "node" -d 'Machines: add, list, show, pin host keys, remove'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "module" -d 'The catalogue\'s modules: list, show one\'s settings, check a module folder'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "assign" -d 'Put a module on nodes'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "unassign" -d 'Take a module off a node (the next push undoes it there)'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "place" -d 'Put one of an instance\'s directories elsewhere on its node than the default layout'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "seat" -d 'Seats: the mesh\'s one answer for a provision, held by one instance'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "settings" -d 'Read and change a module\'s settings layers'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "secret" -d 'Secrets: set the operator\'s own (read from a terminal or stdin), rotate generated ones'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "config" -d 'Every setting of an assignment with its effective value and where it came from'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "plan" -d 'What a push would change: compared with what each node\'s helper confirmed it has'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "check" -d 'What a push would change on the machines now (the helper\'s dry run, so drift shows)'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "push" -d 'Apply each node\'s declaration on the machine'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "history" -d 'Past pushes and how they ended'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "rollback" -d 'Send nodes a generation the inventory kept again, and hold them at it until released'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "facts" -d 'What each machine last said it is (distribution, memory, CPUs, addresses): the facts a template reads through a `"fact"` requirement. Any push or check gathers them'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "lab" -d 'Throwaway Debian machines on this host to try mesh on (root, systemd-nspawn)'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "inventory" -d 'Export the inventory as a reviewable text document, or import one'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "completions" -d 'Print a shell completion script (node and module names too, for bash, zsh and fish)'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "man" -d 'Print mesh\'s manual page (roff) on stdout'
complete -c mesh -n "__fish_mesh_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand init" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand init" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand init" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand init" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand init" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand init" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and not __fish_seen_subcommand_from add remove list help" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and not __fish_seen_subcommand_from add remove list help" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and not __fish_seen_subcommand_from add remove list help" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and not __fish_seen_subcommand_from add remove list help" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and not __fish_seen_subcommand_from add remove list help" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and not __fish_seen_subcommand_from add remove list help" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and not __fish_seen_subcommand_from add remove list help" -f -a "add" -d 'Remember folders of modules (each read after the ones remembered before it, so a module there overrides a built-in one, or an earlier folder\'s, of the same name)'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and not __fish_seen_subcommand_from add remove list help" -f -a "remove" -d 'Forget remembered folders (their modules stay on disk; assignments of them are then refused until a folder has them again)'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and not __fish_seen_subcommand_from add remove list help" -f -a "list" -d 'The remembered folders, in the order they are read'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and not __fish_seen_subcommand_from add remove list help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from add" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from add" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from add" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from add" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from add" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from remove" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from remove" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from remove" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from remove" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from remove" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from list" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from list" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from list" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from list" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from help" -f -a "add" -d 'Remember folders of modules (each read after the ones remembered before it, so a module there overrides a built-in one, or an earlier folder\'s, of the same name)'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Forget remembered folders (their modules stay on disk; assignments of them are then refused until a folder has them again)'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from help" -f -a "list" -d 'The remembered folders, in the order they are read'
complete -c mesh -n "__fish_mesh_using_subcommand catalogue; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and not __fish_seen_subcommand_from add set tag untag list show trust remove adopt import help" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and not __fish_seen_subcommand_from add set tag untag list show trust remove adopt import help" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and not __fish_seen_subcommand_from add set tag untag list show trust remove adopt import help" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and not __fish_seen_subcommand_from add set tag untag list show trust remove adopt import help" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand node; and not __fish_seen_subcommand_from add set tag untag list show trust remove adopt import help" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and not __fish_seen_subcommand_from add set tag untag list show trust remove adopt import help" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand node; and not __fish_seen_subcommand_from add set tag untag list show trust remove adopt import help" -f -a "add" -d 'Add a machine (one node per address and port: a second name for it is refused)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and not __fish_seen_subcommand_from add set tag untag list show trust remove adopt import help" -f -a "set" -d 'Change how a machine is reached, in place: its assignments, settings, placements, pins, tags and history are kept. A new address or port unpins its host key'
complete -c mesh -n "__fish_mesh_using_subcommand node; and not __fish_seen_subcommand_from add set tag untag list show trust remove adopt import help" -f -a "tag" -d 'Give a machine tags (groups), selected as `@TAG` wherever nodes are taken'
complete -c mesh -n "__fish_mesh_using_subcommand node; and not __fish_seen_subcommand_from add set tag untag list show trust remove adopt import help" -f -a "untag" -d 'Take tags off a machine'
complete -c mesh -n "__fish_mesh_using_subcommand node; and not __fish_seen_subcommand_from add set tag untag list show trust remove adopt import help" -f -a "list" -d 'List the machines'
complete -c mesh -n "__fish_mesh_using_subcommand node; and not __fish_seen_subcommand_from add set tag untag list show trust remove adopt import help" -f -a "show" -d 'Everything the inventory says of one machine'
complete -c mesh -n "__fish_mesh_using_subcommand node; and not __fish_seen_subcommand_from add set tag untag list show trust remove adopt import help" -f -a "trust" -d 'Pin the host key a machine offers (asks first, unless --fingerprint says which)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and not __fish_seen_subcommand_from add set tag untag list show trust remove adopt import help" -f -a "remove" -d 'Remove a machine, its assignments and its node layers (the machine itself is not touched)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and not __fish_seen_subcommand_from add set tag untag list show trust remove adopt import help" -f -a "adopt" -d 'Take machines whose helper records were lost as they are now (push refuses them until then), and hear what can no longer be given back; a new machine keeps what it has'
complete -c mesh -n "__fish_mesh_using_subcommand node; and not __fish_seen_subcommand_from add set tag untag list show trust remove adopt import help" -f -a "import" -d 'Nodes from another tool\'s inventory (an Ansible INI file), its groups as tags'
complete -c mesh -n "__fish_mesh_using_subcommand node; and not __fish_seen_subcommand_from add set tag untag list show trust remove adopt import help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from add" -l address -d 'Host name or IP address to connect to, or a Host alias of ~/.ssh/config' -r
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from add" -l local -d 'A node on this machine, not reached over SSH: its helper runs as a child process of mesh, as your user, with DIR (an absolute path to a directory) standing for the machine\'s `/`' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from add" -l port -d 'SSH port [default: the ssh configuration\'s Port, else 22]' -r
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from add" -l user -d 'The user to log in as; not root needs --sudo [default: the ssh configuration\'s User, else root]' -r
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from add" -l identity -d 'The private key to log in with [default: ssh-agent, then ~/.ssh/id_*]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from add" -l root -d 'Where instances\' directories go on this machine unless placed: `<root>/<instance>/<name>`' -r
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from add" -l jump -d 'Reach it through jump hosts, first first: `[USER@]HOST[:PORT][,HOST2…]` (a HOST that is a node is reached as that node); `none` connects directly, ignoring the ssh configuration\'s ProxyJump [default: the ssh configuration\'s ProxyJump]' -r
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from add" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from add" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from add" -l sudo -d 'Run the helper through `sudo -n` (the user needs passwordless sudo)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from add" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from add" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from add" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from set" -l address -d 'Host name or IP address to connect to (unpins the host key)' -r
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from set" -l port -d 'SSH port (unpins the host key)' -r
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from set" -l user -d 'The user to log in as; not root needs --sudo' -r
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from set" -l identity -d 'The private key to log in with' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from set" -l root -d 'Where instances\' directories go on this machine unless placed (`mesh plan` shows what a push would then change)' -r
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from set" -l jump -d 'Reach it through these jump hosts from now on: `[USER@]HOST[:PORT][,HOST2…]`; `none` connects directly, ignoring the ssh configuration\'s ProxyJump (as `ssh -J none`)' -r
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from set" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from set" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from set" -l sudo -d 'Run the helper through `sudo -n` from now on'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from set" -l no-sudo -d 'Log in as root directly from now on (with --user root)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from set" -l no-jump -d 'Forget the node\'s own --jump (or `none`): the ssh configuration\'s ProxyJump applies'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from set" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from set" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from set" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from tag" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from tag" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from tag" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from tag" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from tag" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from tag" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from untag" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from untag" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from untag" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from untag" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from untag" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from untag" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from list" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from list" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from list" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from list" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from show" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from show" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from show" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from show" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from trust" -l fingerprint -d 'Pin only if the machine offers this key (`SHA256:…`, as `ssh-keygen -lf` prints it)' -r
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from trust" -l connect-timeout -d 'Seconds to wait for the machine' -r
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from trust" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from trust" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from trust" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from trust" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from trust" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from trust" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from remove" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from remove" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from remove" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from remove" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from remove" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from adopt" -l exclude -d 'Leave out the nodes this selects (a name, glob or `@TAG`). Repeatable' -r
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from adopt" -l parallel -d 'Nodes pushed at once' -r
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from adopt" -l connect-timeout -d 'Seconds to connect, verify the host key and log in, per node' -r
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from adopt" -l timeout -d 'Seconds one node\'s whole run may take (connecting, uploading, applying); a node past it is reported FAILED (timeout) with the step it was in, and the others go on' -r
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from adopt" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from adopt" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from adopt" -l all -d 'Every node in the inventory'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from adopt" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from adopt" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from adopt" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from adopt" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from import" -l from -d 'What kind of file it is' -r -f -a "ansible\t'An Ansible inventory in INI form (`[web]`, `[prod:children]`, `[web:vars]`, ranges)'
ssh-config\t'An OpenSSH client configuration: each `Host` alias that names one machine becomes a node reached by that alias, so its HostName, Port, User, ProxyJump and IdentityFile stay the configuration\'s, read at every push as ssh reads them; patterns are skipped, saying so'"
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from import" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from import" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from import" -l dry-run -d 'Say what would be added, changed and left alone; store nothing'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from import" -l replace -d 'Take the file\'s values for nodes the inventory has with others (their assignments, layers and pinned keys are kept)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from import" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from import" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from import" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from import" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from help" -f -a "add" -d 'Add a machine (one node per address and port: a second name for it is refused)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from help" -f -a "set" -d 'Change how a machine is reached, in place: its assignments, settings, placements, pins, tags and history are kept. A new address or port unpins its host key'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from help" -f -a "tag" -d 'Give a machine tags (groups), selected as `@TAG` wherever nodes are taken'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from help" -f -a "untag" -d 'Take tags off a machine'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the machines'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from help" -f -a "show" -d 'Everything the inventory says of one machine'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from help" -f -a "trust" -d 'Pin the host key a machine offers (asks first, unless --fingerprint says which)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Remove a machine, its assignments and its node layers (the machine itself is not touched)'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from help" -f -a "adopt" -d 'Take machines whose helper records were lost as they are now (push refuses them until then), and hear what can no longer be given back; a new machine keeps what it has'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from help" -f -a "import" -d 'Nodes from another tool\'s inventory (an Ansible INI file), its groups as tags'
complete -c mesh -n "__fish_mesh_using_subcommand node; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand module; and not __fish_seen_subcommand_from list show check help" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand module; and not __fish_seen_subcommand_from list show check help" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand module; and not __fish_seen_subcommand_from list show check help" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand module; and not __fish_seen_subcommand_from list show check help" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand module; and not __fish_seen_subcommand_from list show check help" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand module; and not __fish_seen_subcommand_from list show check help" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand module; and not __fish_seen_subcommand_from list show check help" -f -a "list" -d 'Every module, with its version and what it is for'
complete -c mesh -n "__fish_mesh_using_subcommand module; and not __fish_seen_subcommand_from list show check help" -f -a "show" -d 'One module: its settings as a form (name, type, default, cost, meaning) and its resources'
complete -c mesh -n "__fish_mesh_using_subcommand module; and not __fish_seen_subcommand_from list show check help" -f -a "check" -d 'Check a module folder (or a folder of them) the way the catalogue loads it'
complete -c mesh -n "__fish_mesh_using_subcommand module; and not __fish_seen_subcommand_from list show check help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from list" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from list" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from list" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from list" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from show" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from show" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from show" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from show" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from check" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from check" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from check" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from check" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from check" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from help" -f -a "list" -d 'Every module, with its version and what it is for'
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from help" -f -a "show" -d 'One module: its settings as a form (name, type, default, cost, meaning) and its resources'
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from help" -f -a "check" -d 'Check a module folder (or a folder of them) the way the catalogue loads it'
complete -c mesh -n "__fish_mesh_using_subcommand module; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand assign" -l exclude -d 'Leave out the nodes this selects. Repeatable' -r
complete -c mesh -n "__fish_mesh_using_subcommand assign" -l as -d 'The instance name it runs under [default: the module\'s name]' -r
complete -c mesh -n "__fish_mesh_using_subcommand assign" -l pin -d 'Answer a module requirement with this provider, whatever the default rule would choose. Repeatable' -r
complete -c mesh -n "__fish_mesh_using_subcommand assign" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand assign" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand assign" -l all -d 'Every node in the inventory (as it is now: a node added later is not)'
complete -c mesh -n "__fish_mesh_using_subcommand assign" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand assign" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand assign" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand assign" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand unassign" -l exclude -d 'Leave out the nodes this selects. Repeatable' -r
complete -c mesh -n "__fish_mesh_using_subcommand unassign" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand unassign" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand unassign" -l all -d 'Every node it runs on'
complete -c mesh -n "__fish_mesh_using_subcommand unassign" -l force -d 'Take away a provider even though consumers depend on it: they are held, keeping what they have, until they are unassigned or pinned to another provider'
complete -c mesh -n "__fish_mesh_using_subcommand unassign" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand unassign" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand unassign" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand unassign" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand place" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand place" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand place" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand place" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand place" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand place" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand seat; and not __fish_seen_subcommand_from set list help" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand seat; and not __fish_seen_subcommand_from set list help" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand seat; and not __fish_seen_subcommand_from set list help" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand seat; and not __fish_seen_subcommand_from set list help" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand seat; and not __fish_seen_subcommand_from set list help" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand seat; and not __fish_seen_subcommand_from set list help" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand seat; and not __fish_seen_subcommand_from set list help" -f -a "set" -d 'Give a seat (the mesh\'s one answer for a provision) to an instance'
complete -c mesh -n "__fish_mesh_using_subcommand seat; and not __fish_seen_subcommand_from set list help" -f -a "list" -d 'Every held seat'
complete -c mesh -n "__fish_mesh_using_subcommand seat; and not __fish_seen_subcommand_from set list help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand seat; and __fish_seen_subcommand_from set" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand seat; and __fish_seen_subcommand_from set" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand seat; and __fish_seen_subcommand_from set" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand seat; and __fish_seen_subcommand_from set" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand seat; and __fish_seen_subcommand_from set" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand seat; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand seat; and __fish_seen_subcommand_from list" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand seat; and __fish_seen_subcommand_from list" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand seat; and __fish_seen_subcommand_from list" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand seat; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand seat; and __fish_seen_subcommand_from list" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand seat; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand seat; and __fish_seen_subcommand_from help" -f -a "set" -d 'Give a seat (the mesh\'s one answer for a provision) to an instance'
complete -c mesh -n "__fish_mesh_using_subcommand seat; and __fish_seen_subcommand_from help" -f -a "list" -d 'Every held seat'
complete -c mesh -n "__fish_mesh_using_subcommand seat; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and not __fish_seen_subcommand_from show set unset clear help" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand settings; and not __fish_seen_subcommand_from show set unset clear help" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand settings; and not __fish_seen_subcommand_from show set unset clear help" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and not __fish_seen_subcommand_from show set unset clear help" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and not __fish_seen_subcommand_from show set unset clear help" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and not __fish_seen_subcommand_from show set unset clear help" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and not __fish_seen_subcommand_from show set unset clear help" -f -a "show" -d 'Read a layer: the mesh-wide one, a tag\'s with --tag, or a node\'s with --node'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and not __fish_seen_subcommand_from show set unset clear help" -f -a "set" -d 'Replace a layer whole with KEY=VALUE pairs (values by the setting\'s type; JSON for lists and objects). Removing a key that is set needs --replace'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and not __fish_seen_subcommand_from show set unset clear help" -f -a "unset" -d 'Remove keys from a layer, naming each (the rest of the layer stays; kept in the history)'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and not __fish_seen_subcommand_from show set unset clear help" -f -a "clear" -d 'Remove a layer (it is kept in the history)'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and not __fish_seen_subcommand_from show set unset clear help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from show" -l node -d 'A node\'s layer [default: the mesh-wide layer]' -r
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from show" -l tag -d 'The layer for every node carrying TAG (between the mesh-wide layer and a node\'s)' -r
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from show" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from show" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from show" -l history -d 'Also every layer it replaced, oldest first'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from show" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from show" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from set" -l node -d 'A node\'s layer [default: the mesh-wide layer]' -r
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from set" -l tag -d 'The layer for every node carrying TAG (between the mesh-wide layer and a node\'s)' -r
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from set" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from set" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from set" -l replace -d 'Allow the new layer to drop keys the old one set'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from set" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from set" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from set" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from unset" -l node -d 'A node\'s layer [default: the mesh-wide layer]' -r
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from unset" -l tag -d 'The layer for every node carrying TAG (between the mesh-wide layer and a node\'s)' -r
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from unset" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from unset" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from unset" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from unset" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from unset" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from unset" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from clear" -l node -d 'A node\'s layer [default: the mesh-wide layer]' -r
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from clear" -l tag -d 'The layer for every node carrying TAG (between the mesh-wide layer and a node\'s)' -r
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from clear" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from clear" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from clear" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from clear" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from clear" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from clear" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from help" -f -a "show" -d 'Read a layer: the mesh-wide one, a tag\'s with --tag, or a node\'s with --node'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from help" -f -a "set" -d 'Replace a layer whole with KEY=VALUE pairs (values by the setting\'s type; JSON for lists and objects). Removing a key that is set needs --replace'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from help" -f -a "unset" -d 'Remove keys from a layer, naming each (the rest of the layer stays; kept in the history)'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from help" -f -a "clear" -d 'Remove a layer (it is kept in the history)'
complete -c mesh -n "__fish_mesh_using_subcommand settings; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand secret; and not __fish_seen_subcommand_from set rotate help" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand secret; and not __fish_seen_subcommand_from set rotate help" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand secret; and not __fish_seen_subcommand_from set rotate help" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand secret; and not __fish_seen_subcommand_from set rotate help" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand secret; and not __fish_seen_subcommand_from set rotate help" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand secret; and not __fish_seen_subcommand_from set rotate help" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand secret; and not __fish_seen_subcommand_from set rotate help" -f -a "set" -d 'Set a secret the module takes from the operator ("from": "operator"): the value is read from a terminal without echo, or from stdin; never from the command line'
complete -c mesh -n "__fish_mesh_using_subcommand secret; and not __fish_seen_subcommand_from set rotate help" -f -a "rotate" -d 'Make a new value for a generated secret; the plan then shows every file that reads it and the units that pay for it'
complete -c mesh -n "__fish_mesh_using_subcommand secret; and not __fish_seen_subcommand_from set rotate help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand secret; and __fish_seen_subcommand_from set" -l node -d 'The node the instance runs on (needed when it runs on several)' -r
complete -c mesh -n "__fish_mesh_using_subcommand secret; and __fish_seen_subcommand_from set" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand secret; and __fish_seen_subcommand_from set" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand secret; and __fish_seen_subcommand_from set" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand secret; and __fish_seen_subcommand_from set" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand secret; and __fish_seen_subcommand_from set" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand secret; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand secret; and __fish_seen_subcommand_from rotate" -l node -d 'The node the instance runs on (needed when it runs on several)' -r
complete -c mesh -n "__fish_mesh_using_subcommand secret; and __fish_seen_subcommand_from rotate" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand secret; and __fish_seen_subcommand_from rotate" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand secret; and __fish_seen_subcommand_from rotate" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand secret; and __fish_seen_subcommand_from rotate" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand secret; and __fish_seen_subcommand_from rotate" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand secret; and __fish_seen_subcommand_from rotate" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand secret; and __fish_seen_subcommand_from help" -f -a "set" -d 'Set a secret the module takes from the operator ("from": "operator"): the value is read from a terminal without echo, or from stdin; never from the command line'
complete -c mesh -n "__fish_mesh_using_subcommand secret; and __fish_seen_subcommand_from help" -f -a "rotate" -d 'Make a new value for a generated secret; the plan then shows every file that reads it and the units that pay for it'
complete -c mesh -n "__fish_mesh_using_subcommand secret; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand config" -l node -d 'The node it is assigned to' -r
complete -c mesh -n "__fish_mesh_using_subcommand config" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand config" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand config" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand config" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand config" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand config" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand plan" -l exclude -d 'Leave out the nodes this selects (a name, glob or `@TAG`). Repeatable' -r
complete -c mesh -n "__fish_mesh_using_subcommand plan" -l canary -d 'Nodes pushed first, in a wave of their own: if one fails, no further wave starts' -r
complete -c mesh -n "__fish_mesh_using_subcommand plan" -l max-unavailable -d 'At most this many (N) or this share (P%) of each module\'s assignments restart at once, for this push (instead of each module.json\'s "rollout": {"max-unavailable"})' -r
complete -c mesh -n "__fish_mesh_using_subcommand plan" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand plan" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand plan" -l all -d 'Every node in the inventory'
complete -c mesh -n "__fish_mesh_using_subcommand plan" -l diff -d 'Show each changed file\'s content as a unified diff'
complete -c mesh -n "__fish_mesh_using_subcommand plan" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand plan" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand plan" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand plan" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand check" -l exclude -d 'Leave out the nodes this selects (a name, glob or `@TAG`). Repeatable' -r
complete -c mesh -n "__fish_mesh_using_subcommand check" -l parallel -d 'Nodes pushed at once' -r
complete -c mesh -n "__fish_mesh_using_subcommand check" -l connect-timeout -d 'Seconds to connect, verify the host key and log in, per node' -r
complete -c mesh -n "__fish_mesh_using_subcommand check" -l timeout -d 'Seconds one node\'s whole run may take (connecting, uploading, applying); a node past it is reported FAILED (timeout) with the step it was in, and the others go on' -r
complete -c mesh -n "__fish_mesh_using_subcommand check" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand check" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand check" -l all -d 'Every node in the inventory'
complete -c mesh -n "__fish_mesh_using_subcommand check" -l diff -d 'Show each file that differs on the machine as a unified diff from what it has to what a push would write (a secret file or an environment file is never shown)'
complete -c mesh -n "__fish_mesh_using_subcommand check" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand check" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand check" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand check" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand push" -l exclude -d 'Leave out the nodes this selects (a name, glob or `@TAG`). Repeatable' -r
complete -c mesh -n "__fish_mesh_using_subcommand push" -l move -d 'Send a push that moves this instance\'s container data (a mount\'s directory on the machine changes); without it such a node is held. Repeatable' -r
complete -c mesh -n "__fish_mesh_using_subcommand push" -l confirm-timeout -d 'Seconds a change that can cut you off (sshd, network, firewall) waits to be confirmed over a new connection before the machine reverts it by itself (at most an hour: a machine that cut you off stays cut off until then)' -r
complete -c mesh -n "__fish_mesh_using_subcommand push" -l canary -d 'Nodes pushed first, in a wave of their own: if one fails, no further wave starts' -r
complete -c mesh -n "__fish_mesh_using_subcommand push" -l max-unavailable -d 'At most this many (N) or this share (P%) of each module\'s assignments restart at once, for this push (instead of each module.json\'s "rollout": {"max-unavailable"})' -r
complete -c mesh -n "__fish_mesh_using_subcommand push" -l max-failed -d 'Nodes (N) or share of the rollout\'s nodes (P%) that may fail before no further wave starts; unreachable nodes are not counted' -r
complete -c mesh -n "__fish_mesh_using_subcommand push" -l parallel -d 'Nodes pushed at once' -r
complete -c mesh -n "__fish_mesh_using_subcommand push" -l connect-timeout -d 'Seconds to connect, verify the host key and log in, per node' -r
complete -c mesh -n "__fish_mesh_using_subcommand push" -l timeout -d 'Seconds one node\'s whole run may take (connecting, uploading, applying); a node past it is reported FAILED (timeout) with the step it was in, and the others go on' -r
complete -c mesh -n "__fish_mesh_using_subcommand push" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand push" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand push" -l all -d 'Every node in the inventory'
complete -c mesh -n "__fish_mesh_using_subcommand push" -l behind -d 'Only the selected nodes whose declaration differs from what their helper confirmed, or whose last push failed or was interrupted (with --all: every such node)'
complete -c mesh -n "__fish_mesh_using_subcommand push" -l overwrite -d 'Replace whatever generation the machines are at, even one another inventory pushed since this one last saw them (without it such a node is refused as stale)'
complete -c mesh -n "__fish_mesh_using_subcommand push" -l resume -d 'Continue the last rollout, stopped or cut short: its nodes not yet applied, in their waves (no selection: the rollout\'s own nodes)'
complete -c mesh -n "__fish_mesh_using_subcommand push" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand push" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand push" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand push" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand history; and not __fish_seen_subcommand_from show help" -l exclude -d 'Leave out the nodes this selects. Repeatable' -r
complete -c mesh -n "__fish_mesh_using_subcommand history; and not __fish_seen_subcommand_from show help" -l limit -d 'How many pushes to show, the latest first' -r
complete -c mesh -n "__fish_mesh_using_subcommand history; and not __fish_seen_subcommand_from show help" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand history; and not __fish_seen_subcommand_from show help" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand history; and not __fish_seen_subcommand_from show help" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand history; and not __fish_seen_subcommand_from show help" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand history; and not __fish_seen_subcommand_from show help" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand history; and not __fish_seen_subcommand_from show help" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand history; and not __fish_seen_subcommand_from show help" -a "show" -d 'A past push\'s full report, by the id `mesh history` shows (#ID); or, as `NODE@GEN`, the resources generation GEN of NODE had, as they were sent'
complete -c mesh -n "__fish_mesh_using_subcommand history; and not __fish_seen_subcommand_from show help" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand history; and __fish_seen_subcommand_from show" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand history; and __fish_seen_subcommand_from show" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand history; and __fish_seen_subcommand_from show" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand history; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand history; and __fish_seen_subcommand_from show" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand history; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "show" -d 'A past push\'s full report, by the id `mesh history` shows (#ID); or, as `NODE@GEN`, the resources generation GEN of NODE had, as they were sent'
complete -c mesh -n "__fish_mesh_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -l to -d 'The generation to send the nodes again, as `mesh history NODE` lists it' -r
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -l push -d 'Every node of past push ID (`mesh history` shows it) back to the generation it had before that push' -r
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -l confirm-timeout -d 'Seconds a change that can cut you off waits to be confirmed over a new connection (as `mesh push --confirm-timeout`)' -r
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -l move -d 'Send a rollback that moves this instance\'s container data (as `mesh push --move`); without it such a node is held and sent nothing. Repeatable' -r
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -l canary -d 'Nodes pushed first, in a wave of their own: if one fails, no further wave starts' -r
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -l max-unavailable -d 'At most this many (N) or this share (P%) of each module\'s assignments restart at once, for this push (instead of each module.json\'s "rollout": {"max-unavailable"})' -r
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -l parallel -d 'Nodes pushed at once' -r
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -l connect-timeout -d 'Seconds to connect, verify the host key and log in, per node' -r
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -l timeout -d 'Seconds one node\'s whole run may take (connecting, uploading, applying); a node past it is reported FAILED (timeout) with the step it was in, and the others go on' -r
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -l release -d 'Release the nodes from the generation a rollback holds them at: the next push sends them the inventory\'s declaration again'
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -l dry-run -d 'Show the plan only, send nothing'
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -l diff -d 'Show each changed file\'s content as a unified diff'
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -l overwrite -d 'Replace whatever generation the machines are at, even one another inventory pushed since this one last saw them'
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand rollback" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand facts" -l exclude -d 'Leave out the nodes this selects (a name, glob or `@TAG`). Repeatable' -r
complete -c mesh -n "__fish_mesh_using_subcommand facts" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand facts" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand facts" -l all -d 'Every node in the inventory'
complete -c mesh -n "__fish_mesh_using_subcommand facts" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand facts" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand facts" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand facts" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and not __fish_seen_subcommand_from up down stop start rebuild status help" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand lab; and not __fish_seen_subcommand_from up down stop start rebuild status help" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand lab; and not __fish_seen_subcommand_from up down stop start rebuild status help" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and not __fish_seen_subcommand_from up down stop start rebuild status help" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and not __fish_seen_subcommand_from up down stop start rebuild status help" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and not __fish_seen_subcommand_from up down stop start rebuild status help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and not __fish_seen_subcommand_from up down stop start rebuild status help" -f -a "up" -d 'Boot N machines (node1..nodeN) and add them to the inventory; running ones are kept'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and not __fish_seen_subcommand_from up down stop start rebuild status help" -f -a "down" -d 'Stop and delete every lab machine (they stay in the inventory until `node remove`)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and not __fish_seen_subcommand_from up down stop start rebuild status help" -f -a "stop" -d 'Power one machine off (its disk is kept)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and not __fish_seen_subcommand_from up down stop start rebuild status help" -f -a "start" -d 'Boot a stopped machine again'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and not __fish_seen_subcommand_from up down stop start rebuild status help" -f -a "rebuild" -d 'Reinstall one machine in place: a blank disk, new host keys (pinned), the same address'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and not __fish_seen_subcommand_from up down stop start rebuild status help" -f -a "status" -d 'Every lab machine and whether it runs'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and not __fish_seen_subcommand_from up down stop start rebuild status help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from up" -l release -d 'The Debian release of the machines: `bookworm` (12, the default) or `trixie` (13) for every one, or a mix in node order, `bookworm:2,trixie:2`. A running machine of another release is made again' -r
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from up" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from up" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from up" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from up" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from up" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from up" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from down" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from down" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from down" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from down" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from down" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from down" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from stop" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from stop" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from stop" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from stop" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from stop" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from stop" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from start" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from start" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from start" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from start" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from start" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from start" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from rebuild" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from rebuild" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from rebuild" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from rebuild" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from rebuild" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from rebuild" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from status" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from status" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from status" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from status" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from status" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "up" -d 'Boot N machines (node1..nodeN) and add them to the inventory; running ones are kept'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "down" -d 'Stop and delete every lab machine (they stay in the inventory until `node remove`)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "stop" -d 'Power one machine off (its disk is kept)'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "start" -d 'Boot a stopped machine again'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "rebuild" -d 'Reinstall one machine in place: a blank disk, new host keys (pinned), the same address'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "status" -d 'Every lab machine and whether it runs'
complete -c mesh -n "__fish_mesh_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and not __fish_seen_subcommand_from export import help" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and not __fish_seen_subcommand_from export import help" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and not __fish_seen_subcommand_from export import help" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and not __fish_seen_subcommand_from export import help" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and not __fish_seen_subcommand_from export import help" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and not __fish_seen_subcommand_from export import help" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and not __fish_seen_subcommand_from export import help" -f -a "export" -d 'Write the whole inventory as a sorted JSON document (nodes, pinned keys, tags, ports, assignments, pins, placements, settings layers, seats). Generated secrets are left out; pushes and what the machines confirmed too'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and not __fish_seen_subcommand_from export import help" -f -a "import" -d 'Make the inventory what an exported document says (creating the inventory if there is none). What it adds, changes and removes is shown first; removing anything needs --replace'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and not __fish_seen_subcommand_from export import help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from export" -s o -l output -d 'Write it to this file [default: stdout]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from export" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from export" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from export" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from export" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from export" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from export" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from import" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from import" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from import" -l replace -d 'Allow the import to remove what the file lacks: nodes, assignments, tags, pinned host keys (or re-pin one to another key), ports the host gave out, pins, placements, settings and seats (as `settings set --replace` allows a layer to drop keys)'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from import" -l dry-run -d 'Only show what it would change'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from import" -l force -d 'Take away a provider that answers consumers (the file lacks it, or runs another module under its name), as `mesh unassign --force` does: they are held, keeping what they have, until they are unassigned or pinned to another provider'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from import" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from import" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from import" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from import" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from help" -f -a "export" -d 'Write the whole inventory as a sorted JSON document (nodes, pinned keys, tags, ports, assignments, pins, placements, settings layers, seats). Generated secrets are left out; pushes and what the machines confirmed too'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from help" -f -a "import" -d 'Make the inventory what an exported document says (creating the inventory if there is none). What it adds, changes and removes is shown first; removing anything needs --replace'
complete -c mesh -n "__fish_mesh_using_subcommand inventory; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand completions" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand completions" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand completions" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand completions" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand completions" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand completions" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand man" -l dir -d 'Write the pages into DIR instead, as a package installs them: mesh.1 (the whole manual) and mesh-COMMAND.1 for every command (`man mesh-node-add`)' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand man" -l inventory -d 'The inventory file [default: $MESH_INVENTORY, else $XDG_STATE_HOME/mesh/inventory.db]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand man" -l catalogue -d 'A folder of modules to add to the built-in catalogue (repeatable). A module here overrides a built-in one of the same name, read after the folders the inventory remembers (`mesh catalogue list`), never instead of them [default: $MESH_CATALOGUE, `:`-separated]' -r -F
complete -c mesh -n "__fish_mesh_using_subcommand man" -l markdown -d 'Print the command reference as Markdown instead (docs/commands.md is this)'
complete -c mesh -n "__fish_mesh_using_subcommand man" -l json -d 'Print results as JSON, for scripts (errors too: `{"error": {"kind", "message"}}`)'
complete -c mesh -n "__fish_mesh_using_subcommand man" -s q -l quiet -d 'Print only what changed or failed: a push or check that changed nothing prints nothing'
complete -c mesh -n "__fish_mesh_using_subcommand man" -s v -l verbose -d 'Print what happens on each node as it happens, with timings (on stderr)'
complete -c mesh -n "__fish_mesh_using_subcommand man" -s h -l help -d 'Print help'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "init" -d 'Create the inventory file, remembering the catalogue folders given (--catalogue)'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "catalogue" -d 'The catalogue folders the inventory remembers: add, remove, list'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "node" -d 'Machines: add, list, show, pin host keys, remove'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "module" -d 'The catalogue\'s modules: list, show one\'s settings, check a module folder'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "assign" -d 'Put a module on nodes'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "unassign" -d 'Take a module off a node (the next push undoes it there)'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "place" -d 'Put one of an instance\'s directories elsewhere on its node than the default layout'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "seat" -d 'Seats: the mesh\'s one answer for a provision, held by one instance'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "settings" -d 'Read and change a module\'s settings layers'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "secret" -d 'Secrets: set the operator\'s own (read from a terminal or stdin), rotate generated ones'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "config" -d 'Every setting of an assignment with its effective value and where it came from'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "plan" -d 'What a push would change: compared with what each node\'s helper confirmed it has'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "check" -d 'What a push would change on the machines now (the helper\'s dry run, so drift shows)'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "push" -d 'Apply each node\'s declaration on the machine'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "history" -d 'Past pushes and how they ended'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "rollback" -d 'Send nodes a generation the inventory kept again, and hold them at it until released'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "facts" -d 'What each machine last said it is (distribution, memory, CPUs, addresses): the facts a template reads through a `"fact"` requirement. Any push or check gathers them'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "lab" -d 'Throwaway Debian machines on this host to try mesh on (root, systemd-nspawn)'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "inventory" -d 'Export the inventory as a reviewable text document, or import one'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "completions" -d 'Print a shell completion script (node and module names too, for bash, zsh and fish)'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "man" -d 'Print mesh\'s manual page (roff) on stdout'
complete -c mesh -n "__fish_mesh_using_subcommand help; and not __fish_seen_subcommand_from init catalogue node module assign unassign place seat settings secret config plan check push history rollback facts lab inventory completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from catalogue" -f -a "add" -d 'Remember folders of modules (each read after the ones remembered before it, so a module there overrides a built-in one, or an earlier folder\'s, of the same name)'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from catalogue" -f -a "remove" -d 'Forget remembered folders (their modules stay on disk; assignments of them are then refused until a folder has them again)'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from catalogue" -f -a "list" -d 'The remembered folders, in the order they are read'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from node" -f -a "add" -d 'Add a machine (one node per address and port: a second name for it is refused)'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from node" -f -a "set" -d 'Change how a machine is reached, in place: its assignments, settings, placements, pins, tags and history are kept. A new address or port unpins its host key'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from node" -f -a "tag" -d 'Give a machine tags (groups), selected as `@TAG` wherever nodes are taken'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from node" -f -a "untag" -d 'Take tags off a machine'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from node" -f -a "list" -d 'List the machines'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from node" -f -a "show" -d 'Everything the inventory says of one machine'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from node" -f -a "trust" -d 'Pin the host key a machine offers (asks first, unless --fingerprint says which)'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from node" -f -a "remove" -d 'Remove a machine, its assignments and its node layers (the machine itself is not touched)'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from node" -f -a "adopt" -d 'Take machines whose helper records were lost as they are now (push refuses them until then), and hear what can no longer be given back; a new machine keeps what it has'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from node" -f -a "import" -d 'Nodes from another tool\'s inventory (an Ansible INI file), its groups as tags'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from module" -f -a "list" -d 'Every module, with its version and what it is for'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from module" -f -a "show" -d 'One module: its settings as a form (name, type, default, cost, meaning) and its resources'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from module" -f -a "check" -d 'Check a module folder (or a folder of them) the way the catalogue loads it'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from seat" -f -a "set" -d 'Give a seat (the mesh\'s one answer for a provision) to an instance'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from seat" -f -a "list" -d 'Every held seat'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from settings" -f -a "show" -d 'Read a layer: the mesh-wide one, a tag\'s with --tag, or a node\'s with --node'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from settings" -f -a "set" -d 'Replace a layer whole with KEY=VALUE pairs (values by the setting\'s type; JSON for lists and objects). Removing a key that is set needs --replace'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from settings" -f -a "unset" -d 'Remove keys from a layer, naming each (the rest of the layer stays; kept in the history)'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from settings" -f -a "clear" -d 'Remove a layer (it is kept in the history)'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from secret" -f -a "set" -d 'Set a secret the module takes from the operator ("from": "operator"): the value is read from a terminal without echo, or from stdin; never from the command line'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from secret" -f -a "rotate" -d 'Make a new value for a generated secret; the plan then shows every file that reads it and the units that pay for it'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from history" -f -a "show" -d 'A past push\'s full report, by the id `mesh history` shows (#ID); or, as `NODE@GEN`, the resources generation GEN of NODE had, as they were sent'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "up" -d 'Boot N machines (node1..nodeN) and add them to the inventory; running ones are kept'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "down" -d 'Stop and delete every lab machine (they stay in the inventory until `node remove`)'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "stop" -d 'Power one machine off (its disk is kept)'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "start" -d 'Boot a stopped machine again'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "rebuild" -d 'Reinstall one machine in place: a blank disk, new host keys (pinned), the same address'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "status" -d 'Every lab machine and whether it runs'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from inventory" -f -a "export" -d 'Write the whole inventory as a sorted JSON document (nodes, pinned keys, tags, ports, assignments, pins, placements, settings layers, seats). Generated secrets are left out; pushes and what the machines confirmed too'
complete -c mesh -n "__fish_mesh_using_subcommand help; and __fish_seen_subcommand_from inventory" -f -a "import" -d 'Make the inventory what an exported document says (creating the inventory if there is none). What it adds, changes and removes is shown first; removing anything needs --replace'

complete -c mesh -n "__fish_seen_subcommand_from plan check push history assign" -f -a "(mesh __complete nodes 2>/dev/null; mesh __complete tags 2>/dev/null)"
complete -c mesh -n "__fish_seen_subcommand_from show set tag untag trust remove adopt unassign place stop start" -f -a "(mesh __complete nodes 2>/dev/null)"
complete -c mesh -n "__fish_seen_subcommand_from assign module settings config unassign place" -f -a "(mesh __complete modules 2>/dev/null)"
complete -c mesh -l node -x -a "(mesh __complete nodes 2>/dev/null)"
complete -c mesh -l exclude -x -a "(mesh __complete nodes 2>/dev/null; mesh __complete tags 2>/dev/null)"
