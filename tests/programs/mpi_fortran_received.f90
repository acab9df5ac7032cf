! Fortran receives that get less than they posted (room for 100 integers, 10 arrive), each
! finished by another call, at 2 ranks, each rank with the other; built with `use mpi`, or
! with `use mpi_f08` when compiled with -cpp -DF08. In order: MPI_Recv (MPI_STATUS_IGNORE);
! MPI_Sendrecv (a status); then, each after MPI_Irecv and an MPI_Send of 10 integers to
! the other rank: Wait (a status), Waitall of 1 (MPI_STATUSES_IGNORE), Waitall of 2 (two
! receives, statuses), Waitany, Waitsome, and Test, Testall, Testany, Testsome each called
! until it finishes the receive. Every status the program gets is checked (source, 10
! integers); a wrong one stops the program with code 3. 12 messages a rank, 480 bytes.
#ifdef F08
#define SOURCE_OF(s) s%MPI_SOURCE
#define NTH(s, i) s(i)
#else
#define SOURCE_OF(s) s(MPI_SOURCE)
#define NTH(s, i) s(:, i)
#endif
program fortran_received
#ifdef F08
  use mpi_f08
  implicit none
  type(MPI_Request) :: one(1), two(2)
  type(MPI_Status) :: status, statuses(2)
#else
  use mpi
  implicit none
  integer :: one(1), two(2)
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 2)
#endif
  integer :: ierr, rank, peer, index, outcount, indices(2), got
  integer :: room(100), second(100), message(10)
  logical :: flag
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  peer = 1 - rank
  message = rank
  if (rank == 0) then
    call MPI_Send(message, 10, MPI_INTEGER, peer, 1, MPI_COMM_WORLD, ierr)
    call MPI_Recv(room, 100, MPI_INTEGER, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  else
    call MPI_Recv(room, 100, MPI_INTEGER, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Send(message, 10, MPI_INTEGER, peer, 1, MPI_COMM_WORLD, ierr)
  end if
  call MPI_Sendrecv(message, 10, MPI_INTEGER, peer, 2, room, 100, MPI_INTEGER, peer, 2, &
                    MPI_COMM_WORLD, status, ierr)
  call check(status)
  call MPI_Irecv(room, 100, MPI_INTEGER, peer, 3, MPI_COMM_WORLD, one(1), ierr)
  call MPI_Send(message, 10, MPI_INTEGER, peer, 3, MPI_COMM_WORLD, ierr)
  call MPI_Wait(one(1), status, ierr)
  call check(status)
  call MPI_Irecv(room, 100, MPI_INTEGER, peer, 4, MPI_COMM_WORLD, one(1), ierr)
  call MPI_Send(message, 10, MPI_INTEGER, peer, 4, MPI_COMM_WORLD, ierr)
  call MPI_Waitall(1, one, MPI_STATUSES_IGNORE, ierr)
  call MPI_Irecv(room, 100, MPI_INTEGER, peer, 5, MPI_COMM_WORLD, two(1), ierr)
  call MPI_Irecv(second, 100, MPI_INTEGER, peer, 6, MPI_COMM_WORLD, two(2), ierr)
  call MPI_Send(message, 10, MPI_INTEGER, peer, 5, MPI_COMM_WORLD, ierr)
  call MPI_Send(message, 10, MPI_INTEGER, peer, 6, MPI_COMM_WORLD, ierr)
  call MPI_Waitall(2, two, statuses, ierr)
  call check(NTH(statuses, 1))
  call check(NTH(statuses, 2))
  call MPI_Irecv(room, 100, MPI_INTEGER, peer, 7, MPI_COMM_WORLD, one(1), ierr)
  call MPI_Send(message, 10, MPI_INTEGER, peer, 7, MPI_COMM_WORLD, ierr)
  call MPI_Waitany(1, one, index, status, ierr)
  call check(status)
  call MPI_Irecv(room, 100, MPI_INTEGER, peer, 8, MPI_COMM_WORLD, one(1), ierr)
  call MPI_Send(message, 10, MPI_INTEGER, peer, 8, MPI_COMM_WORLD, ierr)
  call MPI_Waitsome(1, one, outcount, indices, statuses, ierr)
  call check(NTH(statuses, 1))
  call MPI_Irecv(room, 100, MPI_INTEGER, peer, 9, MPI_COMM_WORLD, one(1), ierr)
  call MPI_Send(message, 10, MPI_INTEGER, peer, 9, MPI_COMM_WORLD, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(one(1), flag, status, ierr)
  end do
  call check(status)
  call MPI_Irecv(room, 100, MPI_INTEGER, peer, 10, MPI_COMM_WORLD, one(1), ierr)
  call MPI_Send(message, 10, MPI_INTEGER, peer, 10, MPI_COMM_WORLD, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Testall(1, one, flag, statuses, ierr)
  end do
  call check(NTH(statuses, 1))
  call MPI_Irecv(room, 100, MPI_INTEGER, peer, 11, MPI_COMM_WORLD, one(1), ierr)
  call MPI_Send(message, 10, MPI_INTEGER, peer, 11, MPI_COMM_WORLD, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Testany(1, one, index, flag, status, ierr)
  end do
  call check(status)
  call MPI_Irecv(room, 100, MPI_INTEGER, peer, 12, MPI_COMM_WORLD, one(1), ierr)
  call MPI_Send(message, 10, MPI_INTEGER, peer, 12, MPI_COMM_WORLD, ierr)
  outcount = 0
  do while (outcount == 0)
    call MPI_Testsome(1, one, outcount, indices, statuses, ierr)
  end do
  call check(NTH(statuses, 1))
  call MPI_Finalize(ierr)
contains
  subroutine check(given)
#ifdef F08
    type(MPI_Status), intent(in) :: given
#else
    integer, intent(in) :: given(MPI_STATUS_SIZE)
#endif
    call MPI_Get_count(given, MPI_INTEGER, got, ierr)
    if (SOURCE_OF(given) /= peer .or. got /= 10) then
      print *, 'rank', rank, 'got a wrong status: source', peer, 'count', got
      call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
      stop 3
    end if
  end subroutine check
end program fortran_received
